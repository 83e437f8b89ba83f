package manifest

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseMetamorphic(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		want    Metamorphic
		wantErr string
	}{
		{name: "defaults", yaml: "", want: defaultMetamorphic()},
		{
			name: "every key",
			yaml: "gate:\n  metamorphic:\n    sample: 7\n    invariance: hold\n    transforms:\n      - {name: number_as_bool, enabled: false, reason: the API reads 0 and 1 as flags}\n      - {name: refusal}\n",
			want: Metamorphic{Enabled: true, Sample: 7, Invariance: InvarianceHold,
				Off: []TransformOff{{Name: TransformNumberAsBool, Reason: "the API reads 0 and 1 as flags", Line: 24}}},
		},
		{
			name: "switched off",
			yaml: "gate:\n  metamorphic:\n    enabled: false\n",
			want: Metamorphic{Enabled: false, EnabledLine: 21, Sample: DefaultMetamorphicSample, Invariance: InvarianceWarn},
		},
		{name: "off without a reason", yaml: "gate:\n  metamorphic:\n    transforms:\n      - {name: refusal, enabled: false}\n", wantErr: "switched off without a reason"},
		{name: "unknown transform", yaml: "gate:\n  metamorphic:\n    transforms:\n      - {name: json_compat, enabled: false, reason: x}\n", wantErr: "did you mean json_compact?"},
		{name: "listed twice", yaml: "gate:\n  metamorphic:\n    transforms:\n      - {name: refusal}\n      - {name: refusal}\n", wantErr: "listed twice"},
		{name: "not a list", yaml: "gate:\n  metamorphic:\n    transforms: refusal\n", wantErr: "must be a list"},
		{name: "bad invariance", yaml: "gate:\n  metamorphic:\n    invariance: sometimes\n", wantErr: "gate.metamorphic.invariance"},
		{name: "unknown key", yaml: "gate:\n  metamorphic:\n    samples: 3\n", wantErr: "did you mean sample?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse([]byte(minimal+tt.yaml), "gradegate.yaml")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, m.Gate.Metamorphic); diff != "" {
				t.Errorf("gate.metamorphic (-want +got):\n%s", diff)
			}
		})
	}
}
