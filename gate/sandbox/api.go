package sandbox

import (
	"errors"
	"fmt"

	"github.com/gradegate/gradegate/gate/grading"
)

// This file holds what the sandbox says on every operating system: its
// refusals and the doctor's report. The layers themselves are Linux's.

// ErrNotAvailable means the operating system has no gradegate sandbox:
// graders run there only unsandboxed. NotAvailable says it for one system.
var ErrNotAvailable = errors.New("sandbox: not available on this system")

// NotAvailable returns the error, matching ErrNotAvailable, that refuses to
// grade on system goos without --unsandboxed. Its text is the one line the
// CLI prints: why there is no sandbox there, and what to do instead.
func NotAvailable(goos string) error { return notAvailableError{goos: goos} }

type notAvailableError struct{ goos string }

func (e notAvailableError) Error() string {
	return fmt.Sprintf("no grader sandbox on %s: gradegate's sandbox is Linux's seccomp, Landlock and per-grader uids; grade here with --unsandboxed (no isolation and no memory limit, and every output says so), or in the gradegate Action, which grades sandboxed in its Linux container", e.goos)
}

func (e notAvailableError) Is(target error) bool { return target == ErrNotAvailable }

// ErrSecretsExposed means a grader could read gradegate's own
// /proc/<pid>/environ (and so GITHUB_TOKEN and other secrets): graders keep
// gradegate's uid, Landlock is unavailable and gradegate is still dumpable.
// Calling ProtectSelf first closes that hole; otherwise gradegate must not
// grade (the CLI exits 3) unless it runs unsandboxed.
var ErrSecretsExposed = errors.New("sandbox: graders could read gradegate's environment")

// ErrNoNetworkBoundary means the seccomp filter that refuses internet sockets
// could not be installed, so gradegate must not grade (the CLI exits 3)
// unless it runs unsandboxed.
var ErrNoNetworkBoundary = errors.New("sandbox: the network boundary cannot be established")

// ErrNoFilesystemBoundary means no Landlock ruleset could be enforced (the
// kernel lacks Landlock, or refuses it), or one was but the probe could
// still write outside scratch or read other processes' /proc entries, so
// nothing but file permissions would stand between a grader and every
// world-readable file (the workspace, the .git/config where
// actions/checkout leaves its token, the event payload, the command line
// of every process on the machine) and every world-writable directory
// (/tmp, /dev/shm); a grader that keeps gradegate's uid could also read the
// environment of the user's other processes and rewrite the user's files.
// gradegate must not grade (the CLI exits 3) unless it runs unsandboxed.
var ErrNoFilesystemBoundary = errors.New("sandbox: the filesystem boundary (Landlock) cannot be established")

// ErrUIDsUnmapped means the uids graders would run as do not exist in
// gradegate's user namespace (a rootless container maps only uid 0), so the
// uid switch is unavailable; the other layers still apply.
var ErrUIDsUnmapped = errors.New("sandbox: the grader uids are not mapped in this user namespace")

// CheckStatus is the outcome of one doctor check.
type CheckStatus string

// The outcomes of a doctor check.
const (
	CheckOK   CheckStatus = "ok"
	CheckFail CheckStatus = "fail"
	CheckSkip CheckStatus = "skip" // not applicable on this machine, or not asked for
)

// Check is one thing `gradegate doctor` tried from inside the sandbox.
type Check struct {
	Name   string      `json:"name"`
	Layer  string      `json:"layer"` // launcher, seccomp, landlock, uid, capabilities, rlimits, environment, python
	Status CheckStatus `json:"status"`
	Detail string      `json:"detail"`
}

// Report is what `gradegate doctor` found.
type Report struct {
	Schema  string          `json:"schema"` // gradegate.doctor/v1
	Kernel  string          `json:"kernel"`
	Sandbox grading.Sandbox `json:"sandbox"` // the layers a run would have in force
	Checks  []Check         `json:"checks"`
	// NetworkBoundary is false when internet sockets could not be
	// refused: gradegate would refuse to grade (exit 3).
	NetworkBoundary bool `json:"network_boundary"`
	// SecretsProtected is false when a grader could read gradegate's
	// /proc/<pid>/environ: gradegate would refuse to grade (New returns
	// ErrSecretsExposed). The doctor's exit code stays tied to the
	// network boundary.
	SecretsProtected bool `json:"secrets_protected"`
	// FilesystemBoundary is false when no Landlock ruleset could be
	// enforced: gradegate would refuse to grade (exit 3).
	FilesystemBoundary bool `json:"filesystem_boundary"`
}
