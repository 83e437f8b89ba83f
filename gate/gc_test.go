package gate

import "testing"

func TestGCLimit(t *testing.T) {
	tests := []struct {
		name        string
		live, limit int64
		want        int64
	}{
		{"a small heap has the floor", 10 << 20, 200 << 20, gcFloor},
		{"the floor stays", 10 << 20, gcFloor, gcFloor},
		{"room above a middling heap", 80 << 20, gcFloor, 104 << 20},
		{"an eighth above a large heap", 400 << 20, gcFloor, 450 << 20},
		{"within a sixteenth keeps the limit", 401 << 20, 450 << 20, 450 << 20},
		{"the limit comes down with the heap", 100 << 20, 500 << 20, 124 << 20},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := gcLimit(tc.live, tc.limit); got != tc.want {
				t.Errorf("gcLimit(%d, %d) = %d, want %d", tc.live, tc.limit, got, tc.want)
			}
		})
	}
}
