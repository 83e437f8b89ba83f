package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"testing"
)

// TestProbeQuote holds the probe's JSON quoting to json.dumps: both are
// decoded by encoding/json to the same string, for paths with quotes,
// backslashes, control characters, non-ASCII, astral characters and the
// lone surrogates of undecodable file names.
func TestProbeQuote(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	const check = probeQuote + `import json, sys
cases = ["/usr/bin/python3", 'a"b', "a\\b", "tab\tnew\nline\x7f", "café/ü", "/opt/\U0001F600/py", "bad\udcff\udc80name", ""]
for s in cases:
    print(json.dumps([q(s), json.dumps(s)]))
`
	out, err := exec.CommandContext(context.Background(), py, "-I", "-c", check).Output()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		var pair [2]string
		if err := json.Unmarshal(line, &pair); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		var got, want string
		if err := json.Unmarshal([]byte(pair[0]), &got); err != nil {
			t.Fatalf("q wrote %s, which is not JSON: %v", pair[0], err)
		}
		if err := json.Unmarshal([]byte(pair[1]), &want); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("q wrote %s (%q), json.dumps %s (%q)", pair[0], got, pair[1], want)
		}
		n++
	}
	if n != 8 {
		t.Fatalf("%d strings checked, want 8", n)
	}
}
