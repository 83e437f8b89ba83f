package gate

import (
	"fmt"
	"os"
	"runtime/pprof"
	"runtime/trace"
)

// StartCPUProfile starts a Go CPU profile of gradegate itself, written to
// the file name (GRADEGATE_CPUPROFILE, for measuring gradegate); the func
// stops it and closes the file.
func StartCPUProfile(name string) (func(), error) {
	f, err := os.Create(name)
	if err != nil {
		return nil, fmt.Errorf("GRADEGATE_CPUPROFILE: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("GRADEGATE_CPUPROFILE: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// StartTrace starts a Go execution trace of gradegate itself, written to
// the file name (GRADEGATE_TRACE, for measuring gradegate: `go tool trace`
// shows which goroutine waits for which); the func stops it and closes the
// file.
func StartTrace(name string) (func(), error) {
	f, err := os.Create(name)
	if err != nil {
		return nil, fmt.Errorf("GRADEGATE_TRACE: %w", err)
	}
	if err := trace.Start(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("GRADEGATE_TRACE: %w", err)
	}
	return func() {
		trace.Stop()
		f.Close()
	}, nil
}
