package worker

import (
	"context"
	"os/exec"
	"testing"
)

// TestRunScript: gradegate's own scripts run isolated and without the site
// module (so no .pth file of site-packages runs), and their JSON answer is
// decoded.
func TestRunScript(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	const script = `import json, sys
print(json.dumps({"site": "site" in sys.modules, "isolated": sys.flags.isolated == 1, "stdin": sys.stdin.read(), "arg": sys.argv[1]}))`
	var out struct {
		Site     bool   `json:"site"`
		Isolated bool   `json:"isolated"`
		Stdin    string `json:"stdin"`
		Arg      string `json:"arg"`
	}
	if err := RunScript(context.Background(), py, script, []byte("in"), &out, "a1"); err != nil {
		t.Fatal(err)
	}
	if out.Site || !out.Isolated || out.Stdin != "in" || out.Arg != "a1" {
		t.Errorf("got %+v, want no site module, isolated mode, stdin %q and argument %q", out, "in", "a1")
	}
}
