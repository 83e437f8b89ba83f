//go:build linux

package sandbox

import (
	"flag"
	"os/exec"
	"testing"
)

var benchLauncher = flag.String("launcher", "", "a gradegate binary to benchmark as the launcher instead of the test binary, whose own start-up is slower")

// BenchmarkStart compares starting `python -I -S -c pass` bare with starting
// it through the launcher with every layer:
//
//	go test -run '^$' -bench Start -benchtime 100x ./gate/sandbox/ [-args -launcher=/path/to/gradegate]
func BenchmarkStart(b *testing.B) {
	s := newSandbox(b)
	if *benchLauncher != "" {
		var err error
		if s, err = New(WithLauncher(*benchLauncher)); err != nil {
			b.Fatal(err)
		}
	}
	py := python(b, s)
	argv := []string{py, "-I", "-S", "-c", "pass"}
	dir, cleanup, err := s.Scratch(1)
	if err != nil {
		b.Fatal(err)
	}
	defer cleanup()
	b.Run("bare", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Dir, cmd.Env = dir, graderEnv(dir)
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sandboxed", func(b *testing.B) {
		for b.Loop() {
			cmd := s.Command(Spec{Slot: 1, ScratchDir: dir, MemoryMB: 1024, CPUSeconds: 10}, argv, graderEnv(dir))
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
		}
	})
	// The launcher's own share: the layers around /bin/true.
	b.Run("launcher-only", func(b *testing.B) {
		for b.Loop() {
			cmd := s.Command(Spec{Slot: 1, ScratchDir: dir, MemoryMB: 1024, CPUSeconds: 10}, []string{"/bin/true"}, graderEnv(dir))
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
		}
	})
}
