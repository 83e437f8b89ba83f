//go:build !linux

package sandbox

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/gradegate/gradegate/gate/grading"
)

// This file is the sandbox on every system but Linux: the layers are
// Linux's (seccomp, Landlock, per-grader uids, prctl), so there is none.
// New refuses (NotAvailable), and only an unsandboxed Sandbox, whose
// status says so in every output, can be made.

// The names below are those of the Linux sandbox, so that the packages
// using it build everywhere.

// LauncherArg is the first argument that makes the gradegate binary act as
// the sandbox launcher (Linux only).
const LauncherArg = "__gradegate-launch"

// BaseUID is the first uid graders run as on Linux when gradegate is root.
const BaseUID = 60000

// UIDBlockSize is how many uids a Linux Sandbox reserves at a time.
const UIDBlockSize = 64

// DefaultUIDLockDir holds the uid block locks on Linux.
const DefaultUIDLockDir = "/run/gradegate/uids"

// Spec is what one grader process gets.
type Spec struct {
	Slot       int
	ScratchDir string
	MemoryMB   int
	CPUSeconds int
	ReadPaths  []string
}

// Sandbox here is always unsandboxed.
type Sandbox struct {
	scratchRoot string
	slots       int
	unsandboxed bool
}

// Option configures a Sandbox.
type Option func(*Sandbox)

// WithLauncher has no effect: there is no launcher on this system.
func WithLauncher(string) Option { return func(*Sandbox) {} }

// WithUnsandboxed runs graders without any layer, the only way there is here.
func WithUnsandboxed(on bool) Option { return func(s *Sandbox) { s.unsandboxed = on } }

// WithSlots sets how many worker slots the Sandbox serves.
func WithSlots(n int) Option { return func(s *Sandbox) { s.slots = n } }

// WithUIDLockDir has no effect: there are no grader uids on this system.
func WithUIDLockDir(string) Option { return func(*Sandbox) {} }

// WithScratchRoot sets the directory under which Scratch creates scratch
// directories (default: os.TempDir).
func WithScratchRoot(dir string) Option { return func(s *Sandbox) { s.scratchRoot = dir } }

// New returns an unsandboxed Sandbox when asked for one and refuses
// (NotAvailable) otherwise.
func New(opts ...Option) (*Sandbox, error) {
	s := &Sandbox{scratchRoot: os.TempDir()}
	for _, o := range opts {
		o(s)
	}
	if !s.unsandboxed {
		return nil, NotAvailable(runtime.GOOS)
	}
	if s.slots <= 0 {
		s.slots = max(UIDBlockSize, runtime.NumCPU())
	}
	return s, nil
}

// Close does nothing: no uids are held.
func (s *Sandbox) Close() error { return nil }

// Slots returns how many worker slots the Sandbox serves.
func (s *Sandbox) Slots() int { return s.slots }

// SlotUID returns -1: graders keep gradegate's own user.
func (s *Sandbox) SlotUID(int) int { return -1 }

// Command returns an unstarted command that runs argv with exactly env as
// its environment (nil means empty) in spec's scratch directory, with no
// isolation.
func (s *Sandbox) Command(spec Spec, argv []string, env []string) *exec.Cmd {
	if env == nil {
		env = []string{}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Dir = spec.ScratchDir
	return cmd
}

// Scratch creates a fresh scratch directory private to gradegate's user.
func (s *Sandbox) Scratch(slot int) (dir string, cleanup func() error, err error) {
	dir, err = os.MkdirTemp(s.scratchRoot, fmt.Sprintf("gradegate-scratch-%d-", slot))
	if err != nil {
		return "", nil, fmt.Errorf("sandbox: scratch directory: %w", err)
	}
	return dir, func() error { return os.RemoveAll(dir) }, nil
}

// Status reports that no layer is in force.
func (s *Sandbox) Status() grading.Sandbox { return grading.Sandbox{UID: -1, Unsandboxed: true} }

// String renders the status the way every output shows it.
func (s *Sandbox) String() string { return StatusString(s.Status()) }

// StatusString renders st the way every output shows it.
func StatusString(st grading.Sandbox) string {
	if st.Unsandboxed {
		return "UNSANDBOXED: no seccomp, no landlock, no rlimits, uid unchanged"
	}
	return "not available on " + runtime.GOOS
}

// CheckInterpreter checks only that path is absolute and exists: graders
// run as gradegate's own user.
func (s *Sandbox) CheckInterpreter(path string) error {
	if !filepath.IsAbs(path) {
		return fmt.Errorf("sandbox: interpreter %q: not an absolute path", path)
	}
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("sandbox: interpreter: %w", err)
	}
	return nil
}

// OthersCanRun has nothing to check here: graders keep gradegate's uid.
func OthersCanRun(path string) error { return nil }

// ProtectSelf does nothing here: it is prctl(PR_SET_DUMPABLE), which only
// Linux has, and there are no sandboxed graders to protect gradegate from.
func ProtectSelf() error { return nil }

// Init is the first thing every gradegate process runs. There is no
// launcher on this system: a request to act as one fails.
func Init(args []string) error {
	if len(args) > 1 && args[1] == LauncherArg {
		return NotAvailable(runtime.GOOS)
	}
	return nil
}

// Doctor reports the one check there is here: the sandbox is not available.
func Doctor(ctx context.Context, s *Sandbox, python string) Report {
	return Report{
		Schema:  "gradegate.doctor/v1",
		Kernel:  runtime.GOOS + " " + runtime.GOARCH,
		Sandbox: grading.Sandbox{UID: -1, Unsandboxed: true},
		Checks:  []Check{{Name: "grader sandbox", Layer: "launcher", Status: CheckFail, Detail: NotAvailable(runtime.GOOS).Error()}},
	}
}

// WriteText writes the report as plain text.
func (r Report) WriteText(w io.Writer) error {
	_, err := fmt.Fprintf(w, "system: %s\nsandbox: %s\n\nnetwork boundary: NOT established; gradegate refuses to grade here unless --unsandboxed\n", r.Kernel, NotAvailable(runtime.GOOS))
	return err
}

// ReapOrphans does nothing here: without the sandbox no worker's process
// group is waited for.
func ReapOrphans() {}

// Keep returns os.Exit: the keeper process is Linux's (see keep.go).
func Keep(args []string, stderr io.Writer) (exit func(code int)) { return os.Exit }

// KeepFirst does nothing: there is no keeper here.
func KeepFirst(args []string, stderr io.Writer) {}
