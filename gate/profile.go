package gate

import (
	"fmt"
	"os"
	"runtime/pprof"
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
