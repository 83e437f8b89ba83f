package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gradegate/gradegate/gate/buildinfo"
)

// TestVersionCommand checks both spellings and the JSON form, which says
// the Action image the binary runs in.
func TestVersionCommand(t *testing.T) {
	file := strings.TrimSpace(embeddedVersion)
	for _, args := range [][]string{{"version"}, {"--version"}} {
		var stdout, stderr bytes.Buffer
		o := execute(context.Background(), args, func(string) string { return "" }, &stdout, &stderr)
		if o.code != exitPass || !strings.HasPrefix(stdout.String(), "gradegate "+file) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 0 and gradegate %s", args, o.code, stdout.String(), stderr.String(), file)
		}
	}
	var stdout, stderr bytes.Buffer
	env := map[string]string{imageEnv: "slim"}
	o := execute(context.Background(), []string{"version", "--format", "json"}, func(k string) string { return env[k] }, &stdout, &stderr)
	if o.code != exitPass {
		t.Fatalf("exit %d: %s", o.code, stderr.String())
	}
	var got buildinfo.Version
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("version --format json: %v\n%s", err, stdout.String())
	}
	if got.Schema != "gradegate.version/v1" || !strings.HasPrefix(got.Version, file) || got.Image != "slim" || got.Go == "" {
		t.Errorf("version --format json = %+v", got)
	}
	o = execute(context.Background(), []string{"version", "extra"}, func(string) string { return "" }, &stdout, &stderr)
	if o.code != exitInput {
		t.Errorf("version extra: exit %d, want %d", o.code, exitInput)
	}
}
