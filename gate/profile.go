package gate

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"runtime/trace"
)

// StartProfiles starts what the environment asks for, for measuring
// gradegate itself: a Go CPU profile of the whole command written to the
// file GRADEGATE_CPUPROFILE names, and a Go execution trace (`go tool
// trace` shows which goroutine waits for which) to the file
// GRADEGATE_TRACE names. The func stops them and closes the files.
func StartProfiles(getenv func(string) string) (func(), error) {
	var stops []func()
	stop := func() {
		for _, s := range stops {
			s()
		}
	}
	for _, p := range []struct {
		env         string
		start       func(io.Writer) error
		stopWriting func()
	}{
		{"GRADEGATE_CPUPROFILE", pprof.StartCPUProfile, pprof.StopCPUProfile},
		{"GRADEGATE_TRACE", trace.Start, trace.Stop},
	} {
		name := getenv(p.env)
		if name == "" {
			continue
		}
		f, err := os.Create(name)
		if err == nil {
			if err = p.start(f); err != nil {
				f.Close()
			}
		}
		if err != nil {
			stop()
			return nil, fmt.Errorf("%s: %w", p.env, err)
		}
		stops = append(stops, func() {
			p.stopWriting()
			f.Close()
		})
	}
	return stop, nil
}
