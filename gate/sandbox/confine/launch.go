//go:build linux

package confine

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// LauncherArg is the first argument that makes the gradegate binary act as
// the launcher; ProbeArg after it makes it the sandbox's probe, which this
// package leaves to the sandbox's own initialisation.
const (
	LauncherArg = "__gradegate-launch"
	ProbeArg    = "__gradegate-probe"
)

// init runs the launcher: a gradegate started with LauncherArg applies the
// layers and execs the grader, and never returns (a launch that fails
// exits with its launcher code). It does so from this package's
// initialisation, before the program's other packages initialise: Go
// initialises a package once its imports have been, the first in the
// order of import paths first, and this package imports only the standard
// library's first packages and golang.org/x/sys/unix, so it comes before
// the libraries for colours, progress bars, YAML, HTTP and GitHub, in each
// of the launchers a run starts.
// TestStartBeforeInit, in cmd/gradegate, checks the order.
func init() {
	if len(os.Args) > 1 && os.Args[1] == LauncherArg && (len(os.Args) < 3 || os.Args[2] != ProbeArg) {
		os.Exit(Launch(os.Args[2:]))
	}
}

// gcOff is the first entry of a launcher's environment, put there by Env:
// the Go runtime reads GOGC before any package initialises (of two
// entries of a name, the first wins), so a launcher never collects
// garbage. A cycle running in the background when RLIMIT_AS takes effect
// would need memory the limit no longer grants ("fatal error: runtime:
// cannot allocate memory"); the launcher lives for milliseconds.
// runtime/debug's SetGCPercent would do the same from Launch, but that
// package is initialised after the libraries init avoids.
const gcOff = "GOGC=off"

func isGOGC(e string) bool { return strings.HasPrefix(e, "GOGC=") }

// Env returns the environment to start a launcher with for a grader whose
// environment is env: gcOff, then env. The launcher drops the first GOGC
// entry, which must be gcOff, before it execs the grader, which gets env
// exactly; a launcher whose GC that entry did not turn off refuses to run.
// An env that sets GOGC itself is an error: exec.Cmd keeps the last entry
// of a name, which would turn the launcher's collector back on.
func Env(env []string) ([]string, error) {
	if slices.ContainsFunc(env, isGOGC) {
		return nil, errors.New("the grader's environment sets GOGC, which the launcher needs for itself")
	}
	return append([]string{gcOff}, env...), nil
}

// Exit codes of a launcher that could not start the grader. Each names the
// layer that failed; the launcher also writes one line starting with
// "gradegate launcher:" to stderr. A launcher never skips a failed layer.
const (
	ExitLaunchUsage       = 120 // malformed launcher arguments
	ExitLaunchRlimit      = 121 // a resource limit could not be set
	ExitLaunchCredentials = 122 // the slot's uid or gid could not be assumed, or capabilities not dropped
	ExitLaunchLandlock    = 123 // the Landlock ruleset could not be built or enforced
	ExitLaunchSeccomp     = 124 // the seccomp filter could not be installed
	ExitLaunchExec        = 125 // the grader's interpreter could not be executed
)

// Spec is what the sandbox's Command tells the launcher, encoded as JSON in the
// launcher's own argument list so the grader's environment stays exactly the
// one the caller chose.
type Spec struct {
	UID       int       `json:"uid"` // -1: keep
	GID       int       `json:"gid"` // -1: keep
	ParentPID int       `json:"ppid"`
	Limits    []Rlimit  `json:"limits"`
	Landlock  *FSPolicy `json:"landlock,omitempty"` // nil: no Landlock
	Seccomp   bool      `json:"seccomp"`
	// UnixSockets lets the grader create AF_UNIX sockets and connect
	// them; only a Landlock ruleset of ABI 9 or later keeps them from
	// reaching sockets outside the grader's own (see SeccompFilter).
	UnixSockets bool `json:"unix_sockets,omitempty"`
	// Signals makes the seccomp filter hold the signal boundary: below
	// Landlock ABI 6 for a grader that keeps gradegate's uid (see
	// FilterOptions).
	Signals bool `json:"signals,omitempty"`
	// Supervisor, with Signals, is the UNIX socket of gradegate's
	// signalSupervisor, to which the launcher passes the filter's
	// listener; "": none, kills of other pids are refused.
	Supervisor string `json:"supervisor,omitempty"`
	// Probe makes the launcher exec itself in probe mode instead of argv,
	// to measure the layers from inside (the sandbox's probe).
	Probe bool `json:"probe,omitempty"`
}

// Rlimit is one resource limit; Hard 0 means the same as Value.
type Rlimit struct {
	Name     string `json:"name"`
	Resource int    `json:"resource"`
	Value    uint64 `json:"value"`
	Hard     uint64 `json:"hard,omitempty"`
}

// Encode is the spec as the launcher reads it: its argument after
// LauncherArg.
func (ls Spec) Encode() string {
	b, err := json.Marshal(ls)
	if err != nil {
		panic(err) // a Spec holds only marshalable fields
	}
	return string(b)
}

// layerError is a failed layer and the exit code that names it.
type layerError struct {
	code int
	err  error
}

func (e *layerError) Error() string { return e.err.Error() }

func failLayer(code int, format string, args ...any) error {
	return &layerError{code: code, err: fmt.Errorf(format, args...)}
}

// Launch is the launcher's main: it applies the layers described by args
// (the encoded spec, "--", then the grader's argv) to its own process and
// execs the grader. It returns only on failure, with an ExitLaunch code.
func Launch(args []string) int {
	env := os.Environ()
	k := slices.IndexFunc(env, isGOGC)
	if k < 0 || env[k] != gcOff {
		return launchFail(ExitLaunchUsage, fmt.Errorf("started without %s before any other GOGC in its environment, which the sandbox gives every launcher", gcOff))
	}
	env = slices.Delete(env, k, k+1)
	if len(args) < 3 || args[1] != "--" {
		return launchFail(ExitLaunchUsage, fmt.Errorf("usage: %s SPEC -- ARGV...", LauncherArg))
	}
	var ls Spec
	if err := json.Unmarshal([]byte(args[0]), &ls); err != nil {
		return launchFail(ExitLaunchUsage, fmt.Errorf("decoding the spec: %w", err))
	}
	argv := args[2:]
	path := argv[0]
	if ls.Probe {
		// The probe is this binary, run through /proc/self/exe: the
		// magic link reaches the file without searching the
		// directories above it, which the slot uid may not be allowed
		// to (go test builds into a 0700 directory).
		path = "/proc/self/exe"
		if ls.Landlock != nil {
			// And Landlock must let it execute this very file.
			exe, err := os.Executable()
			if err != nil {
				return launchFail(ExitLaunchUsage, fmt.Errorf("locating the probe: %w", err))
			}
			ls.Landlock.ReadExec = append(ls.Landlock.ReadExec, exe)
		}
	}

	// Every layer below that is per thread (no_new_privs, Landlock before
	// ABI 8, the parent-death signal) is set on this locked thread, which
	// is also the one that calls execve; execve ends every other thread
	// (fs/exec.c de_thread) and the new program inherits this thread's
	// state. Layers that are per process (uid, rlimits) or synchronised
	// (seccomp TSYNC) cover all threads anyway.
	runtime.LockOSThread()

	// Everything execve needs is allocated now: once RLIMIT_AS is in
	// force the Go heap may not grow (the runtime then dies with "out of
	// memory"), so after the layers the launcher only makes raw syscalls.
	x, err := prepareExec(path, argv, env)
	if err != nil {
		return launchFail(ExitLaunchUsage, err)
	}
	if err := applyLayers(ls); err != nil {
		code := ExitLaunchUsage
		if le, ok := err.(*layerError); ok {
			code = le.code
		}
		return launchFail(code, err)
	}
	errno := x.exec()
	return launchFail(ExitLaunchExec, fmt.Errorf("exec %s: %w", argv[0], errno))
}

// preparedExec holds execve's arguments as C strings.
type preparedExec struct {
	path       *byte
	argv, envv []*byte
}

func prepareExec(path string, argv, env []string) (*preparedExec, error) {
	p, err := unix.BytePtrFromString(path)
	if err != nil {
		return nil, fmt.Errorf("exec %s: %w", path, err)
	}
	a, err := syscall.SlicePtrFromStrings(argv)
	if err != nil {
		return nil, fmt.Errorf("exec %s: %w", path, err)
	}
	e, err := syscall.SlicePtrFromStrings(env)
	if err != nil {
		return nil, fmt.Errorf("exec %s: %w", path, err)
	}
	return &preparedExec{path: p, argv: a, envv: e}, nil
}

// exec calls execve(2) directly, which returns only on failure. Unlike
// syscall.Exec it allocates nothing and does not restore the RLIMIT_NOFILE
// that Go raised at start-up (syscall/rlimit.go) over the one set here.
func (x *preparedExec) exec() unix.Errno {
	_, _, errno := unix.RawSyscall(unix.SYS_EXECVE,
		uintptr(unsafe.Pointer(x.path)),
		uintptr(unsafe.Pointer(&x.argv[0])),
		uintptr(unsafe.Pointer(&x.envv[0])))
	runtime.KeepAlive(x)
	return errno
}

func launchFail(code int, err error) int {
	fmt.Fprintf(os.Stderr, "gradegate launcher: %v\n", err)
	return code
}

// applyLayers applies every layer of ls to the calling process, in an order
// where each step still has the rights it needs: the Landlock ruleset opens
// its paths with gradegate's credentials; the capability bounding set is
// emptied while CAP_SETPCAP is still there, and every other capability goes
// right after the uid switch; the uid changes before the limits,
// because setresuid flags a process whose new uid is over RLIMIT_NPROC and
// its next execve then fails with EAGAIN (kernel/sys.c
// flag_nproc_exceeded, fs/exec.c); the seccomp filter and RLIMIT_AS come
// last, as after them the launcher only makes raw syscalls.
func applyLayers(ls Spec) error {
	ruleset := -1
	if ls.Landlock != nil {
		fd, err := buildRuleset(*ls.Landlock)
		if err != nil {
			return failLayer(ExitLaunchLandlock, "landlock: %w", err)
		}
		ruleset = fd
		defer unix.Close(ruleset)
	}
	// The supervisor's socket is connected now, with gradegate's
	// credentials and before the filter, which refuses connect.
	supervisor := -1
	if ls.Seccomp && ls.Signals && ls.Supervisor != "" {
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err == nil {
			err = unix.Connect(fd, &unix.SockaddrUnix{Name: ls.Supervisor})
		}
		if err != nil {
			return failLayer(ExitLaunchSeccomp, "seccomp: connecting to the signal supervisor: %w", err)
		}
		supervisor = fd
		defer unix.Close(supervisor)
	}
	var filter, unsupervised []unix.SockFilter
	if ls.Seccomp && supervisor >= 0 {
		// For a process that already sits under a filter with a
		// listener (EBUSY: one per chain), kills of other pids are
		// refused instead.
		o := FilterOptions{UnixSockets: ls.UnixSockets, Signals: true, Group: os.Getpid()}
		f, err := SeccompFilter(o)
		if err != nil {
			return failLayer(ExitLaunchSeccomp, "seccomp: %w", err)
		}
		unsupervised = f
	}
	if ls.Seccomp {
		// The launcher leads its process group (Command sets Setpgid) and
		// becomes the grader's first process at execve (checked below).
		f, err := SeccompFilter(FilterOptions{UnixSockets: ls.UnixSockets, Signals: ls.Signals, Supervised: ls.Signals && ls.Supervisor != "", Group: os.Getpid()})
		if err != nil {
			return failLayer(ExitLaunchSeccomp, "seccomp: %w", err)
		}
		filter = f
	}
	// The bounding set goes first, while a privileged launcher still has
	// the CAP_SETPCAP that dropping needs; the uid switch would clear it.
	if err := clearBoundingSet(hasSetpcap()); err != nil {
		return failLayer(ExitLaunchCredentials, "capabilities: %w", err)
	}
	if err := switchCredentials(ls); err != nil {
		return failLayer(ExitLaunchCredentials, "credentials: %w", err)
	}
	if err := dropCapabilities(); err != nil {
		return failLayer(ExitLaunchCredentials, "capabilities: %w", err)
	}
	// RLIMIT_AS comes last (see Launch), and so does RLIMIT_NPROC: the
	// slot's uid may still be near it while the kernel reaps a previous
	// grader's processes, and the Go runtime dies ("failed to create new
	// OS thread", exit 2) if it needs a thread past it. The others now.
	var late []Rlimit
	var others []Rlimit
	for _, l := range ls.Limits {
		if l.Resource == unix.RLIMIT_AS || l.Resource == unix.RLIMIT_NPROC {
			late = append(late, l)
		} else {
			others = append(others, l)
		}
	}
	if err := SetLimits(others); err != nil {
		return failLayer(ExitLaunchRlimit, "rlimit: %w", err)
	}
	lateLimits, err := prepareLimits(late)
	if err != nil {
		return failLayer(ExitLaunchRlimit, "rlimit: %w", err)
	}
	// no_new_privs lets an unprivileged process enforce Landlock and
	// seccomp (landlock_restrict_self(2), seccomp(2)), and keeps set-uid
	// binaries from regaining privileges.
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return failLayer(ExitLaunchSeccomp, "no_new_privs: %w", err)
	}
	if ruleset >= 0 {
		if err := restrictSelf(ruleset, ls.Landlock.ABI); err != nil {
			return failLayer(ExitLaunchLandlock, "landlock: %w", err)
		}
	}
	if ls.Seccomp {
		// A launcher in gradegate's group would let the grader signal
		// and reprioritise gradegate.
		if pid := os.Getpid(); syscall.Getpgrp() != pid {
			return failLayer(ExitLaunchSeccomp, "seccomp: the launcher (pid %d) does not lead its process group %d", pid, syscall.Getpgrp())
		}
		if supervisor < 0 {
			if err := installFilter(filter); err != nil {
				return failLayer(ExitLaunchSeccomp, "seccomp: %w", err)
			}
		} else {
			listener, err := installFilterWithListener(filter)
			switch {
			case errors.Is(err, unix.EBUSY):
				if err := installFilter(unsupervised); err != nil {
					return failLayer(ExitLaunchSeccomp, "seccomp: %w", err)
				}
			case err != nil:
				return failLayer(ExitLaunchSeccomp, "seccomp: %w", err)
			default:
				// The listener is close-on-exec: the grader never
				// holds it.
				err = unix.Sendmsg(supervisor, []byte{0}, unix.UnixRights(listener), nil, 0)
				unix.Close(listener)
				if err != nil {
					return failLayer(ExitLaunchSeccomp, "seccomp: passing the listener to the signal supervisor: %w", err)
				}
			}
		}
	}
	if errno := lateLimits.set(); errno != 0 {
		return failLayer(ExitLaunchRlimit, "rlimit: setrlimit AS or NPROC: %w", errno)
	}
	return nil
}

// switchCredentials drops to ls's uid and gid with no supplementary groups,
// then re-arms the parent-death signal, which the kernel clears whenever
// the effective uid changes (kernel/cred.c commit_creds).
//
// A launcher that keeps gradegate's uid still drops the supplementary
// groups when it may (CAP_SETGID, as root of a rootless container has);
// an unprivileged one cannot, and the doctor reports the groups graders
// keep.
func switchCredentials(ls Spec) error {
	if ls.UID < 0 {
		if eff, _, _, err := ThreadCaps(); err == nil && eff&(1<<unix.CAP_SETGID) != 0 {
			// EPERM when the user namespace denies setgroups
			// (/proc/self/setgroups "deny"): the groups stay, as for an
			// unprivileged launcher.
			_ = syscall.Setgroups(nil)
		}
		return nil
	}
	// Go's syscall.Setgroups, Setresgid and Setresuid change every thread
	// of the process (since Go 1.16), not only the calling one.
	if err := syscall.Setgroups(nil); err != nil {
		return fmt.Errorf("setgroups: %w", err)
	}
	if err := syscall.Setresgid(ls.GID, ls.GID, ls.GID); err != nil {
		return fmt.Errorf("setresgid %d: %w", ls.GID, err)
	}
	if err := syscall.Setresuid(ls.UID, ls.UID, ls.UID); err != nil {
		return fmt.Errorf("setresuid %d: %w", ls.UID, err)
	}
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0); err != nil {
		return fmt.Errorf("parent-death signal: %w", err)
	}
	// gradegate may have died between the switch and the re-arm.
	if ls.ParentPID > 0 && os.Getppid() != ls.ParentPID {
		return fmt.Errorf("gradegate (pid %d) has exited", ls.ParentPID)
	}
	return nil
}
