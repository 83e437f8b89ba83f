//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"strconv"
	"testing"
)

// helperEnv makes the test binary run one of the helpers of helper_test.go
// instead of the tests: they need a process of their own (another uid, a
// user namespace, a non-dumpable process).
const helperEnv = "GRADEGATE_SANDBOX_TEST_HELPER"

// TestMain lets the test binary stand in for gradegate: tests build
// Sandboxes WithLauncher(os.Args[0]), which package confine's init runs as the
// launcher before TestMain, as in gradegate itself.
// Like gradegate it makes itself non-dumpable before anything else.
func TestMain(m *testing.M) {
	if os.Getenv(noLandlockEnv) == "1" {
		// Before anything: every process this one starts, the launcher
		// and the graders included, inherits the filter.
		if err := denyLandlock(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if v := os.Getenv(fakeABIEnv); v != "" {
		abi, err := strconv.Atoi(v)
		if err == nil {
			err = fakeLandlockABI(abi)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if do := os.Getenv(keeperTestEnv); do != "" {
		keeperHelper(do, Keep(os.Args, os.Stderr))
	}
	if name := os.Getenv(helperEnv); name != "" {
		if err := runHelper(name, os.Stdout); err != nil {
			fmt.Fprintf(os.Stderr, "helper %s: %v\n", name, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	// As gradegate's main does (see ProtectSelf); the "secrets" helper
	// above starts unprotected on purpose.
	if err := ProtectSelf(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}
