package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gradegate/gradegate/gate"
	"github.com/gradegate/gradegate/manifest"
)

// TestHostileGraders runs the hostile suite (testdata/examples/hostile: one
// attack on the sandbox per case) through the whole gate, as `gradegate run`
// does, with secrets in the gate's own environment and a loopback listener
// waiting for the grader. Every attack must end classified, the cases after
// it must still be graded, the gate must live to write its results, and
// nothing may leak.
func TestHostileGraders(t *testing.T) {
	for _, isolation := range []string{"worker", "case"} {
		t.Run("isolation="+isolation, func(t *testing.T) { testHostile(t, isolation) })
	}
}

func testHostile(t *testing.T, isolation string) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the sandbox gives graders their own uid only when gradegate runs as root (CI runs as root)")
	}
	secrets := map[string]string{
		"GITHUB_TOKEN":          "ghs_hostile_test_token",
		"OPENAI_API_KEY":        "sk-hostile-test-key",
		"ACTIONS_RUNTIME_TOKEN": "actions-hostile-test",
	}
	for k, v := range secrets {
		t.Setenv(k, v)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port

	escape := filepath.Join(os.TempDir(), "gradegate-hostile-escape")
	os.Remove(escape)
	manifestPath := hostileSuite(t, port, isolation)
	results := filepath.Join(t.TempDir(), "results.json")

	var stdout, stderr bytes.Buffer
	o := execute(context.Background(), []string{"run", manifestPath, "--results", results, "--format", "json"}, os.Getenv, &stdout, &stderr)
	if o.code != exitHold {
		t.Fatalf("exit %d, want %d (hold)\nstderr:\n%s", o.code, exitHold, stderr.String())
	}
	res := readResultsFile(t, results)

	// Under isolation: case the grader's parent is its own worker, which
	// shares its uid and process group: killing it is a crash of the
	// grader's own making, not a breach. Under isolation: worker the parent
	// is gradegate itself, which the sandbox protects.
	killGate := gate.ClassSandboxViolation
	if isolation == "case" {
		killGate = gate.ClassWorkerCrash
	}
	tests := []struct {
		caseID string
		status string
		class  gate.Class
	}{
		{"honest-pass", gate.StatusPass, gate.ClassOK},
		{"honest-fail", gate.StatusFail, gate.ClassOK},
		{"connect", gate.StatusError, gate.ClassSandboxViolation},
		{"secrets", gate.StatusPass, gate.ClassOK}, // it raises if it finds any
		{"parent-environ", gate.StatusError, gate.ClassSandboxViolation},
		{"write-outside", gate.StatusError, gate.ClassSandboxViolation},
		{"memory", gate.StatusError, gate.ClassMemoryExceeded},
		{"fork-bomb", gate.StatusError, gate.ClassSandboxViolation},
		{"busy-loop", gate.StatusError, gate.ClassTimeout},
		{"outlive", gate.StatusPass, gate.ClassOK},
		{"exit", gate.StatusError, gate.ClassWorkerCrash},
		{"segfault", gate.StatusError, gate.ClassWorkerCrash},
		{"kill-gate", gate.StatusError, killGate},
		{"flood", gate.StatusPass, gate.ClassOK},
		{"forge", gate.StatusFail, gate.ClassOK},
		{"big-file", gate.StatusError, gate.ClassSandboxViolation},
		{"setsid", gate.StatusError, gate.ClassGraderException},
		{"honest-after", gate.StatusPass, gate.ClassOK},
	}
	byID := map[string]gate.CaseResult{}
	for _, c := range res.Cases {
		byID[c.CaseID] = c
	}
	if len(byID) != len(tests) {
		t.Errorf("results hold %d cases, want %d", len(byID), len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.caseID, func(t *testing.T) {
			c, ok := byID[tt.caseID]
			if !ok {
				t.Fatal("case missing from the results")
			}
			if c.Status != tt.status || c.Class != tt.class {
				msg := ""
				if c.Error != nil {
					msg = c.Error.Message
				}
				t.Errorf("status %s class %s (%s), want status %s class %s", c.Status, c.Class, msg, tt.status, tt.class)
			}
		})
	}

	if n := accepted.Load(); n != 0 {
		t.Errorf("the loopback listener accepted %d connections from the grader", n)
	}
	if _, err := os.Stat(escape); err == nil {
		t.Errorf("the grader wrote %s outside its scratch directory", escape)
	}
	if flood := byID["flood"].Output; len(flood) > 64<<10 {
		t.Errorf("flood kept %d bytes of output, want it bounded", len(flood))
	}
	if left := processesMatching("sleep\x00371"); len(left) > 0 {
		t.Errorf("a grader's child outlived the gate: pids %v", left)
	}
	raw, err := os.ReadFile(results)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range secrets {
		if bytes.Contains(raw, []byte(v)) || strings.Contains(stdout.String(), v) {
			t.Errorf("%s's value reached the results or the output", k)
		}
	}
	if sb := res.Sandbox; sb.UID < 60000 || !sb.Seccomp || !sb.Rlimits || sb.Unsandboxed {
		t.Errorf("sandbox block %+v, want own uid, seccomp and rlimits in force", sb)
	}
}

// hostileSuite copies the hostile suite into a temporary folder with the
// connect attack aimed at port and grader.isolation set, and pins the new
// digests as `gradegate pin` would.
func hostileSuite(t *testing.T, port int, isolation string) string {
	t.Helper()
	src := filepath.Join("..", "..", "testdata", "examples", "hostile")
	dir := t.TempDir()
	for _, name := range []string{"gradegate.yaml", "grader.py", "cases.jsonl"} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "gradegate.yaml" {
			b = bytes.Replace(b, []byte("  memory_mb: 256\n"), []byte("  memory_mb: 256\n  isolation: "+isolation+"\n"), 1)
		}
		if name == "cases.jsonl" {
			b = bytes.ReplaceAll(b, []byte(`"port": 9`), []byte(`"port": `+strconv.Itoa(port)))
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	digests := map[string]string{}
	for section, name := range map[string]string{"dataset": "cases.jsonl", "grader": "grader.py"} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		d, err := manifest.Digest(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		digests[section] = d
	}
	path := filepath.Join(dir, "gradegate.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pinned, err := manifest.Pin(data, digests)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, pinned, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// processesMatching lists the pids whose command line contains sub (argv
// joined by NUL bytes).
func processesMatching(sub string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmdline), sub) {
			pids = append(pids, pid)
		}
	}
	return pids
}
