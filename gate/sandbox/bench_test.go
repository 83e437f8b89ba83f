//go:build linux

package sandbox

import (
	"flag"
	"fmt"
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

// BenchmarkSyscall measures what the seccomp filter adds to a system call
// that falls through every rule (getppid), and to one it inspects
// (kill(0, 0)): a grader makes 200,000 of each, bare and sandboxed, and the
// benchmark reports ns per call.
//
//	go test -run '^$' -bench Syscall -benchtime 5x ./gate/sandbox/
func BenchmarkSyscall(b *testing.B) {
	s := newSandbox(b)
	py := python(b, s)
	const code = `
import os, sys, time
n = 200000
f = os.getppid if sys.argv[1] == "getppid" else (lambda: os.kill(0, 0))
t = time.perf_counter_ns()
for _ in range(n):
    f()
print((time.perf_counter_ns() - t) / n)
`
	dir, cleanup, err := s.Scratch(1)
	if err != nil {
		b.Fatal(err)
	}
	defer cleanup()
	for _, call := range []string{"getppid", "kill"} {
		for _, mode := range []string{"bare", "sandboxed"} {
			b.Run(call+"/"+mode, func(b *testing.B) {
				var total float64
				for b.Loop() {
					argv := []string{py, "-I", "-S", "-c", code, call}
					var cmd *exec.Cmd
					if mode == "bare" {
						cmd = exec.Command(argv[0], argv[1:]...)
						cmd.Dir, cmd.Env = dir, graderEnv(dir)
					} else {
						cmd = s.Command(Spec{Slot: 1, ScratchDir: dir, MemoryMB: 1024, CPUSeconds: 30}, argv, graderEnv(dir))
					}
					out, err := cmd.Output()
					if err != nil {
						b.Fatalf("%v: %s", err, out)
					}
					var ns float64
					if _, err := fmt.Sscan(string(out), &ns); err != nil {
						b.Fatal(err)
					}
					total += ns
				}
				b.ReportMetric(total/float64(b.N), "ns/call")
			})
		}
	}
}

// BenchmarkBusyUIDs times the scan of every process's uids that reserving
// a uid block makes (busyUIDs), and the thread count of gradegate's own
// uid that a sandbox without a uid switch sets its process limit by:
//
//	go test -run '^$' -bench BusyUIDs -benchtime 300x ./gate/sandbox/
func BenchmarkBusyUIDs(b *testing.B) {
	b.Run("busyUIDs", func(b *testing.B) {
		for b.Loop() {
			busyUIDs(BaseUID, BaseUID+maxUIDBlocks*UIDBlockSize)
		}
	})
	b.Run("tasksOfUID", func(b *testing.B) {
		for b.Loop() {
			tasksOfUID(0)
		}
	})
}
