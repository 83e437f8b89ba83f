package gate

import "testing"

func TestGCLimit(t *testing.T) {
	tests := []struct {
		name        string
		live, limit int64
		want        int64
	}{
		{"small heap keeps the limit", 10 << 20, 256 << 20, 256 << 20},
		{"four fifths of the limit keeps it", 200 << 20, 250 << 20, 250 << 20},
		{"a live heap past four fifths moves it up", 220 << 20, 250 << 20, 330 << 20},
		{"past the limit leaves room for garbage", 1 << 30, 256 << 20, 3 << 29},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := gcLimit(tc.live, tc.limit); got != tc.want {
				t.Errorf("gcLimit(%d, %d) = %d, want %d", tc.live, tc.limit, got, tc.want)
			}
		})
	}
}
