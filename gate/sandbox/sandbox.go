// Package sandbox starts grader processes under gradegate's isolation layers.
//
// gradegate re-executes its own binary as a small launcher (LauncherArg) that
// applies the layers to itself and then execs the grader's interpreter, so
// every limit is in force before the first line of grader code runs.
package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"github.com/gradegate/gradegate/gate"
)

// LauncherArg is the first argument that makes the gradegate binary act as
// the sandbox launcher instead of the command line tool.
const LauncherArg = "__gradegate-launch"

// Spec is what one grader process gets.
type Spec struct {
	Slot       int    // worker slot; picks the uid (BaseUID+Slot) when running as root
	ScratchDir string // working directory, the only writable place
	MemoryMB   int    // address-space limit
	CPUSeconds int    // CPU-time limit
	ReadPaths  []string
}

// Sandbox prepares sandboxed commands.
type Sandbox struct {
	launcher    string // path of the gradegate binary used as launcher
	unsandboxed bool
}

// Option configures a Sandbox.
type Option func(*Sandbox)

// WithLauncher sets the binary re-executed as the launcher (default: os.Executable).
func WithLauncher(path string) Option { return func(s *Sandbox) { s.launcher = path } }

// WithUnsandboxed runs graders without the layers (--unsandboxed).
func WithUnsandboxed(on bool) Option { return func(s *Sandbox) { s.unsandboxed = on } }

// New returns a Sandbox.
func New(opts ...Option) (*Sandbox, error) {
	s := &Sandbox{}
	for _, o := range opts {
		o(s)
	}
	return s, nil
}

// Command returns an unstarted command that runs argv in the sandbox with
// exactly env as its environment. The caller sets Stdin/Stdout/Stderr and
// ExtraFiles before starting it.
//
// Not yet layered: this version only gives the process its own group and a
// parent-death signal; Status says so.
func (s *Sandbox) Command(spec Spec, argv []string, env []string) *exec.Cmd {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Dir = spec.ScratchDir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return cmd
}

// Scratch creates a fresh scratch directory for the process in slot, owned by
// the uid that slot runs as. cleanup removes it and everything in it.
func (s *Sandbox) Scratch(slot int) (dir string, cleanup func() error, err error) {
	dir, err = os.MkdirTemp("", "gradegate-scratch-")
	if err != nil {
		return "", nil, fmt.Errorf("sandbox: scratch directory: %w", err)
	}
	return dir, func() error { return os.RemoveAll(dir) }, nil
}

// Status reports which layers Command puts in force.
func (s *Sandbox) Status() gate.Sandbox {
	return gate.Sandbox{UID: -1, Unsandboxed: true}
}

// Launch is the launcher's main: it applies the layers described by args and
// execs the grader. It returns only on failure, with an exit code.
func Launch(args []string) int { return 3 }
