package manifest

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseFieldPath(t *testing.T) {
	tests := []struct {
		in      string
		want    FieldPath
		wantErr string
	}{
		{in: "request", want: FieldPath{{Key: "request"}}},
		{in: "reference.answer", want: FieldPath{{Key: "reference"}, {Key: "answer"}}},
		{in: "messages[].content", want: FieldPath{{Key: "messages"}, {Index: AnyIndex}, {Key: "content"}}},
		{in: "messages[1].content", want: FieldPath{{Key: "messages"}, {Index: 1}, {Key: "content"}}},
		{in: "grid[0][2]", want: FieldPath{{Key: "grid"}, {Index: 0}, {Index: 2}}},
		{in: "", wantErr: "is empty"},
		{in: "[0].content", wantErr: "starts with a list position"},
		{in: "a..b", wantErr: "empty field name"},
		{in: "a.", wantErr: "empty field name"},
		{in: ".a", wantErr: "empty field name"},
		{in: "a[", wantErr: "'[' without its ']'"},
		{in: "a]", wantErr: "']' without its '['"},
		{in: "a[-1]", wantErr: "a list position is [] or a number from 0"},
		{in: "a[1x]", wantErr: "a list position is [] or a number from 0"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseFieldPath(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseFieldPath(%q) error = %v, want %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseFieldPath(%q) (-want +got):\n%s", tt.in, diff)
			}
			if s := got.String(); s != tt.in {
				t.Errorf("String() = %q, want %q", s, tt.in)
			}
		})
	}
}
