package action

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sethvargo/go-githubactions"

	"github.com/gradegate/gradegate/gate/checkrun"
	"github.com/gradegate/gradegate/gate/results"
)

func TestActionInputCheckNameKeepsDash(t *testing.T) {
	// The runner passes input check-name as INPUT_CHECK-NAME, dash kept.
	env := map[string]string{"INPUT_CHECK-NAME": "release gate", "INPUT_GITHUB-TOKEN": "t"}
	in, err := readInputs(githubactions.New(githubactions.WithGetenv(func(k string) string { return env[k] })))
	if err != nil {
		t.Fatal(err)
	}
	if in.CheckName != "release gate" || in.Token != "t" {
		t.Errorf("check-name %q, github-token set %v", in.CheckName, in.Token != "")
	}
}

func TestCutMarkdown(t *testing.T) {
	md := strings.Repeat("é", 100)
	if got := cutMarkdown(md, len(md)); got != md {
		t.Error("cut a report that fits")
	}
	got := cutMarkdown(md, 150)
	if len(got) > 150 || !utf8.ValidString(got) || !strings.Contains(got, "**Cut**") {
		t.Errorf("cutMarkdown = %q (%d bytes), want at most 150 valid bytes with a note", got, len(got))
	}
}

func TestFailClosed(t *testing.T) {
	failed := os.ErrPermission
	tests := []struct {
		name    string
		code    int
		verdict string
		errs    []error
		want    int
	}{
		{"pass", exitPass, results.VerdictPass, nil, exitPass},
		{"pass, reporting failed", exitPass, results.VerdictPass, []error{nil, failed}, exitInternal},
		{"hold, reporting failed", exitHold, results.VerdictHold, []error{failed}, exitHold},
		{"hold that claims 0", exitPass, results.VerdictHold, nil, exitHold},
		{"unknown verdict that claims 0", exitPass, "maybe", nil, exitHold},
		{"no verdict that claims 0", exitPass, "", nil, exitInternal},
		{"input error", exitInput, "", []error{failed}, exitInput},
	}
	for _, tt := range tests {
		if got := failClosed(tt.code, tt.verdict, tt.errs...); got != tt.want {
			t.Errorf("%s: failClosed = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestAnnotateWithCommands(t *testing.T) {
	var anns []checkrun.Annotation
	for i := range 25 {
		anns = append(anns, checkrun.Annotation{Path: "evals/cases.jsonl", Line: i + 1, Level: checkrun.LevelFailure, Title: "case failed", Message: "score 0\nbelow threshold"})
	}
	anns = append(anns, checkrun.Annotation{Path: "evals/grader.py", Line: 7, Level: checkrun.LevelWarning, Title: "broad_except_constant", Message: "returns 1.0"})
	var out bytes.Buffer
	gh := githubactions.New(githubactions.WithWriter(&out), githubactions.WithGetenv(func(string) string { return "" }))
	annotateWithCommands(gh, anns, "the token may not write checks")
	got := out.String()
	if n := strings.Count(got, "::error "); n != maxCommandAnnotations {
		t.Errorf("%d error commands, want %d", n, maxCommandAnnotations)
	}
	if n := strings.Count(got, "::warning "); n != 1 {
		t.Errorf("%d warning commands, want 1", n)
	}
	if n := strings.Count(got, "::notice::"); n != 1 {
		t.Errorf("%d notices, want 1", n)
	}
	for _, want := range []string{
		"::error file=evals/cases.jsonl,line=1,title=case failed::score 0%0Abelow threshold",
		"11 of 26 annotations follow",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}

func TestActionImageInput(t *testing.T) {
	tests := []struct {
		name, want, running string
		wantErr             string
	}{
		{name: "empty takes the path's image", want: "", running: "full"},
		{name: "the image it runs in", want: "slim", running: "slim"},
		{name: "outside the published images", want: "slim", running: ""},
		{name: "slim asked in the full image", want: "slim", running: "full", wantErr: "uses: gradegate/gradegate/slim@<commit>"},
		{name: "full asked in the slim image", want: "full", running: "slim", wantErr: "uses: gradegate/gradegate@<commit>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckImage(tt.want, tt.running)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
	env := map[string]string{"INPUT_IMAGE": "medium"}
	if _, err := readInputs(githubactions.New(githubactions.WithGetenv(func(k string) string { return env[k] }))); err == nil || !strings.Contains(err.Error(), `input image: want full or slim, got "medium"`) {
		t.Errorf("image medium: error %v", err)
	}
}
