//go:build linux

package worker

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestScriptCache keeps a script's answer for the same interpreter, script,
// input and arguments, and runs the script again for another input, for a
// replaced interpreter and for a kept file that is not the user's own 0600
// file. The script answers with its pid: the same pid is a kept answer.
func TestScriptCache(t *testing.T) {
	const script = "import json, os, sys\nprint(json.dumps({'pid': os.getpid(), 'in': sys.stdin.read(), 'args': sys.argv[1:]}))\n"
	type answer struct {
		PID  int      `json:"pid"`
		In   string   `json:"in"`
		Args []string `json:"args"`
	}
	tests := []struct {
		name   string
		change func(t *testing.T, link, dir string) (stdin string)
		kept   bool
	}{
		{name: "same call", change: func(*testing.T, string, string) string { return "a" }, kept: true},
		{name: "other input", change: func(*testing.T, string, string) string { return "b" }},
		{name: "interpreter replaced", change: func(t *testing.T, link, _ string) string {
			relink(t, link)
			return "a"
		}},
		{name: "readable by others", change: func(t *testing.T, _, dir string) string {
			files, err := filepath.Glob(filepath.Join(dir, "*.json"))
			if err != nil || len(files) != 1 {
				t.Fatalf("kept files %v (%v), want one", files, err)
			}
			chmod(t, files[0], 0o644)
			return "a"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			real := machinePython(t)
			link := filepath.Join(t.TempDir(), "python3")
			if err := os.Symlink(real, link); err != nil {
				t.Fatal(err)
			}
			cache := ScriptCache{Dir: filepath.Join(t.TempDir(), "scripts")}
			var first answer
			if err := cache.Run(context.Background(), link, script, []byte("a"), &first, "x"); err != nil {
				t.Fatalf("Run: %v", err)
			}
			stdin := tt.change(t, link, cache.Dir)
			var second answer
			if err := cache.Run(context.Background(), link, script, []byte(stdin), &second, "x"); err != nil {
				t.Fatalf("Run: %v", err)
			}
			if second.In != stdin || len(second.Args) != 1 || second.Args[0] != "x" {
				t.Fatalf("answer %+v is not the script's for input %q", second, stdin)
			}
			if kept := second.PID == first.PID; kept != tt.kept {
				t.Fatalf("kept answer used: %v, want %v", kept, tt.kept)
			}
		})
	}
}
