//go:build linux

// Package sandbox starts grader processes under gradegate's isolation layers.
//
// gradegate re-executes its own binary as a small launcher (LauncherArg) that
// applies the layers to itself and then execs the grader's interpreter, so
// every limit is in force before the first line of grader code runs.
//
// The layers, in the order the launcher applies them:
//
//   - its own uid and gid per worker slot when gradegate runs as root, with
//     no supplementary groups, from a block of uids this Sandbox reserves
//     for its lifetime (see UIDBlockSize);
//   - no capabilities: the bounding, ambient, effective, permitted and
//     inheritable sets are emptied, also when the grader stays uid 0;
//   - resource limits (address space, CPU, file size, open files, processes,
//     no core files);
//   - Landlock, at the highest ABI the kernel offers: read-only access to
//     the interpreter and the system libraries, read-write access to the
//     scratch directory only, nothing under /proc;
//   - a seccomp filter: no socket but AF_UNIX, and none that can reach a
//     socket the grader did not make, no bind, no System V or POSIX
//     message IPC, no namespaces, no ptrace, no io_uring, no leaving the
//     process group; no limit, priority, scheduling or memory-placement
//     call on another process; no change to any file's mode, owner, times
//     or extended attributes; no inotify, fanotify or memfd; and, where
//     neither Landlock's signal scope (ABI 6) nor a uid of its own keeps
//     a grader's signals in, no signal outside its process group but
//     through gradegate's signal supervisor (see signalSupervisor).
//
// From outside, a Guard holds all of a grader's processes together to its
// memory limit (anonymous and shared memory) and its scratch directory to
// a disk budget. A keeper process above gradegate (Keep) kills whatever a
// grader leaves behind, also when gradegate itself is killed.
//
// None of them needs namespaces or cgroups: inside Docker's default seccomp
// profile unshare(2) and the namespace clone flags are refused and
// /sys/fs/cgroup is mounted read-only, so gradegate must work without them.
// The network boundary (seccomp) and the filesystem boundary (Landlock) are
// required: New refuses without either.
//
// What is in force is measured, never assumed: New runs a probe through the
// launcher and Status reports what the probe saw.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/sandbox/confine"
	"golang.org/x/sys/unix"
)

// LauncherArg is the first argument that makes the gradegate binary act as
// the sandbox launcher instead of the command line tool (package confine).
const LauncherArg = confine.LauncherArg

// BaseUID is the first uid (and gid) graders may run as when gradegate runs
// as root; each Sandbox reserves a block of UIDBlockSize uids from here on
// and slot n runs as the block's first uid plus n. Debian and Ubuntu give
// system users ids below 1000 and regular users ids from 1000; 60000-64999
// are created only on demand (Debian Policy 9.2.2), so on a CI runner or in
// gradegate's image no account owns them.
const BaseUID = 60000

// Fixed limits of every sandboxed grader process, whatever the manifest says.
const (
	// FileSizeLimit bounds every file a grader writes (RLIMIT_FSIZE).
	FileSizeLimit = 1 << 30
	// OpenFilesLimit bounds the grader's open descriptors (RLIMIT_NOFILE).
	OpenFilesLimit = 256
	// processHeadroom is how many processes and threads a grader may add
	// (RLIMIT_NPROC, which the kernel counts per real uid and includes
	// threads: kernel/fork.c copy_process). numeric libraries start one
	// thread per CPU, so the limit grows with the CPU count.
	processHeadroom = 64
)

// unixSocketsABI is the first Landlock ABI under which graders may create
// and connect AF_UNIX sockets: it confines path-named ones to the scratch
// directory (LANDLOCK_ACCESS_FS_RESOLVE_UNIX), and ABI 6's scoping already
// confines abstract ones to the grader's own domain.
const unixSocketsABI = 9

// Spec is what one grader process gets.
type Spec struct {
	Slot       int    // worker slot, 0 to Slots()-1; picks the uid when running as root
	ScratchDir string // working directory, the only writable place
	// MemoryMB bounds the address space of each process (RLIMIT_AS) and,
	// through a Guard, the memory of all the grader's processes together;
	// 0: none.
	MemoryMB int
	// ScratchBytes is the disk the scratch directory may hold, enforced
	// by a Guard; 0: DefaultScratchBudget.
	ScratchBytes int64
	CPUSeconds   int // CPU-time limit; 0: none
	// ReadPaths are readable (and executable) for the grader in addition
	// to the interpreter's prefix and the system libraries: the grader
	// source, the worker script, a virtual environment.
	ReadPaths []string
}

// Sandbox prepares sandboxed commands. It is immutable after New and safe
// for concurrent use until Close.
type Sandbox struct {
	launcher    string // path of the gradegate binary used as launcher
	unsandboxed bool
	scratchRoot string
	probeMemMB  int
	slots       int // slots wanted (WithSlots); 0: the default
	// landlockABIOverride, when > 0, stands in for the kernel's Landlock
	// ABI (tests of older kernels' settings; see withLandlockABI).
	landlockABIOverride int
	uidLockDir          string // "": DefaultUIDLockDir

	// Layers found usable by New's probe; Command applies exactly these.
	setUID         bool            // root: each slot gets its own uid
	uids           *uidReservation // the reserved uids, when setUID
	uidDetail      string          // why setUID is off although gradegate is root
	landlockABI    int
	landlockDetail string // why Landlock was dropped, when it was
	nproc          uint64 // RLIMIT_NPROC for graders
	// supervisor lets graders signal their own children where only the
	// seccomp filter holds the signal boundary (signalsBySeccomp).
	supervisor *signalSupervisor
	status     grading.Sandbox
	probe      *probeReport // what New's probe measured; nil when unsandboxed
}

// Option configures a Sandbox.
type Option func(*Sandbox)

// WithLauncher sets the binary re-executed as the launcher (default: os.Executable).
func WithLauncher(path string) Option { return func(s *Sandbox) { s.launcher = path } }

// WithUnsandboxed runs graders without the layers (--unsandboxed). The
// environment is still exactly the one given to Command, and each grader
// still gets its own process group.
func WithUnsandboxed(on bool) Option { return func(s *Sandbox) { s.unsandboxed = on } }

// WithSlots sets how many worker slots the Sandbox serves (default: 64, or
// the CPU count when larger); when gradegate runs as root it reserves that
// many uids, in blocks of UIDBlockSize.
func WithSlots(n int) Option { return func(s *Sandbox) { s.slots = n } }

// WithUIDLockDir sets the directory holding the uid block locks (default:
// DefaultUIDLockDir). Every gradegate process on the machine must use the
// same one.
func WithUIDLockDir(dir string) Option { return func(s *Sandbox) { s.uidLockDir = dir } }

// WithScratchRoot sets the directory under which Scratch creates scratch
// directories (default: os.TempDir). When gradegate runs as root, the slot
// uids need search permission on it.
func WithScratchRoot(dir string) Option { return func(s *Sandbox) { s.scratchRoot = dir } }

// withLandlockABI makes the Sandbox use Landlock at most at ABI abi, as on
// an older kernel. The tests use it where the faked kernel answer
// (fakeLandlockABI) cannot serve: a process chain can hold one seccomp
// listener, and the fake's would take the signal supervisor's.
func withLandlockABI(abi int) Option { return func(s *Sandbox) { s.landlockABIOverride = abi } }

// New returns a Sandbox. Unless unsandboxed, it launches a probe through the
// launcher with every layer the machine allows and records what the probe
// measured (see Status). A layer that the kernel or container refuses (the
// uid switch in a rootless container, Landlock) is dropped and reported,
// except the two boundaries: without the seccomp network boundary New
// returns an error wrapping ErrNoNetworkBoundary, and without Landlock one
// wrapping ErrNoFilesystemBoundary; when a grader could read gradegate's
// environment it returns an error wrapping ErrSecretsExposed. The error
// names every boundary that is missing.
//
// When gradegate runs as root, the Sandbox holds a block of uids until
// Close or the end of the process.
func New(opts ...Option) (*Sandbox, error) {
	s := &Sandbox{scratchRoot: os.TempDir(), probeMemMB: 4096}
	for _, o := range opts {
		o(s)
	}
	if s.launcher == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("sandbox: locating the launcher: %w", err)
		}
		s.launcher = exe
	}
	if !filepath.IsAbs(s.launcher) {
		abs, err := filepath.Abs(s.launcher)
		if err != nil {
			return nil, fmt.Errorf("sandbox: launcher path: %w", err)
		}
		s.launcher = abs
	}
	if err := closeInheritedOnExec(); err != nil {
		return nil, err
	}
	if s.slots <= 0 {
		s.slots = max(UIDBlockSize, runtime.NumCPU())
	}
	if s.unsandboxed {
		s.status = grading.Sandbox{UID: -1, Unsandboxed: true}
		return s, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	if _, err := s.discover(ctx); err != nil {
		_ = s.Close()
		return nil, err
	}
	var missing []error
	if !s.status.Seccomp {
		missing = append(missing, fmt.Errorf("%w: %s", ErrNoNetworkBoundary, s.probe.networkDetail()))
	}
	if s.status.LandlockABI == 0 {
		missing = append(missing, fmt.Errorf("%w: %s", ErrNoFilesystemBoundary, s.probe.filesystemDetail(s.landlockDetail)))
	}
	if !s.probe.secretsProtected() {
		missing = append(missing, fmt.Errorf("%w: %s", ErrSecretsExposed, s.probe.secretsDetail()))
	}
	if reached := s.probe.reached(); len(reached) > 0 {
		missing = append(missing, fmt.Errorf("%w: a sandboxed process could still %s (signals held by %s); %s", ErrProcessBoundary, strings.Join(reached, ", "), s.signalMechanism(), processBoundaryAdvice))
	}
	if len(missing) > 0 {
		_ = s.Close()
		return nil, errors.Join(missing...)
	}
	return s, nil
}

// Close releases the Sandbox's uid block; graders started from it must have
// ended. The end of the process releases it too.
func (s *Sandbox) Close() error {
	s.supervisor.close()
	s.supervisor = nil
	r := s.uids
	s.uids = nil
	if err := r.release(); err != nil {
		return fmt.Errorf("sandbox: releasing the uid block: %w", err)
	}
	return nil
}

// Slots returns how many worker slots the Sandbox serves; Scratch and
// Command refuse a slot outside 0 to Slots()-1.
func (s *Sandbox) Slots() int {
	if s.uids != nil {
		return s.uids.slots
	}
	return s.slots
}

// checkSlot returns an error for a slot the Sandbox has no uid for.
func (s *Sandbox) checkSlot(slot int) error {
	if s.unsandboxed {
		return nil
	}
	if slot < 0 || slot >= s.Slots() {
		return fmt.Errorf("sandbox: slot %d out of range: this sandbox serves slots 0 to %d (WithSlots)", slot, s.Slots()-1)
	}
	return nil
}

// discover finds the layers this machine allows by probing with all of them
// and dropping, one at a time, the uid switch and Landlock when the
// launcher reports that they failed. It sets s's layers, status and probe,
// and returns the failures that made it drop a layer.
func (s *Sandbox) discover(ctx context.Context) (dropped []error, err error) {
	s.setUID = false
	if os.Geteuid() == 0 {
		r, err := reserveUIDs(s.uidLockDir, s.slots)
		switch {
		case errors.Is(err, ErrUIDsUnmapped):
			// A rootless container (unshare --user --map-root-user,
			// rootless Docker or Podman) maps only uid 0 or a
			// short range: setresuid and chown to an unmapped id
			// fail with EINVAL (kernel/sys.c, fs/attr.c).
			dropped = append(dropped, err)
			s.uidDetail = err.Error()
		case err != nil:
			return nil, err
		default:
			s.uids, s.setUID = r, true
		}
	}
	s.landlockABI = min(confine.KernelLandlockABI(), confine.MaxLandlockABI)
	if s.landlockABIOverride > 0 {
		s.landlockABI = min(s.landlockABI, s.landlockABIOverride)
	}
	s.nproc = processLimit(s.setUID)
	for {
		if s.signalsBySeccomp() && s.supervisor == nil {
			sv, err := startSupervisor(s.scratchRoot)
			if err != nil {
				return dropped, err
			}
			s.supervisor = sv
		}
		rep, err := s.runProbe(ctx)
		var le *launchExitError
		var ce *chownError
		switch {
		case err == nil:
			s.probe = rep
			s.status = rep.status(s)
			return dropped, nil
		case s.setUID && (errors.As(err, &le) && le.code == confine.ExitLaunchCredentials || errors.As(err, &ce)):
			// A root without CAP_SETUID or CAP_CHOWN over other
			// uids cannot give graders their own: keep the uid.
			dropped = append(dropped, err)
			s.uidDetail = err.Error()
			_ = s.Close()
			s.setUID = false
			s.nproc = processLimit(false)
		case errors.As(err, &le) && le.code == confine.ExitLaunchLandlock && s.landlockABI > 0:
			dropped = append(dropped, err)
			s.landlockABI = 0
			s.landlockDetail = err.Error()
		case errors.As(err, &le) && le.code == confine.ExitLaunchSeccomp:
			return dropped, fmt.Errorf("%w: %w", ErrNoNetworkBoundary, errors.Join(append(dropped, err)...))
		default:
			return dropped, fmt.Errorf("sandbox: probe: %w", errors.Join(append(dropped, err)...))
		}
	}
}

// SlotUID returns the uid graders in slot run as: the first uid of the
// Sandbox's block plus slot. It returns -1 when gradegate does not change
// the uid (not root, or the uid switch was refused) and for a slot outside
// 0 to Slots()-1, which Scratch and Command refuse.
func (s *Sandbox) SlotUID(slot int) int {
	if s.unsandboxed || !s.setUID || s.uids == nil || s.checkSlot(slot) != nil {
		return -1
	}
	return s.uids.base + slot
}

// Command returns an unstarted command that runs argv in the sandbox with
// exactly env as its environment (nil means empty: nothing is inherited);
// env may not set GOGC, which the launcher takes for itself (Start fails).
// argv[0] must be an absolute path. The caller sets Stdin/Stdout/Stderr and
// ExtraFiles before starting it; ExtraFiles keep their descriptor numbers
// (3, 4, …) in the grader, and no other descriptor is inherited.
//
// The process leads its own process group (kill it with a negative pid) and
// gets SIGKILL when the thread that started it exits (Linux's parent-death
// signal follows the creating thread, not the process).
//
// A slot outside 0 to Slots()-1 makes Start fail.
func (s *Sandbox) Command(spec Spec, argv []string, env []string) *exec.Cmd {
	if env == nil {
		env = []string{} // a nil Env would inherit gradegate's environment
	}
	if err := s.checkSlot(spec.Slot); err != nil {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Err = err // Start returns it
		return cmd
	}
	if s.unsandboxed {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = env
		cmd.Dir = spec.ScratchDir
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		return cmd
	}
	launchEnv, err := confine.Env(env)
	if err != nil {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Err = fmt.Errorf("sandbox: %w", err) // Start returns it
		return cmd
	}
	ls := s.launchSpec(spec, argv[0])
	args := append([]string{LauncherArg, ls.Encode(), "--"}, argv...)
	cmd := exec.Command(s.launcher, args...)
	cmd.Env = launchEnv
	cmd.Dir = spec.ScratchDir
	// The launcher starts with gradegate's own credentials and switches to
	// the slot's uid itself: the launcher binary may sit in a directory
	// only gradegate's user can search (go run and go test build into
	// 0700 directories).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return cmd
}

// launchExitError is a launcher that exited with one of the ExitLaunch codes.
type launchExitError struct {
	code   int
	stderr string
}

func (e *launchExitError) Error() string {
	return fmt.Sprintf("launcher exited with code %d: %s", e.code, e.stderr)
}

// launchSpec turns spec into the launcher's instructions.
func (s *Sandbox) launchSpec(spec Spec, interpreter string) confine.Spec {
	ls := confine.Spec{
		UID:       -1,
		GID:       -1,
		ParentPID: os.Getpid(),
		Seccomp:   true,
		Limits:    s.limits(spec),
		// Landlock ABI 9 confines path-named UNIX sockets to scratch; with
		// ABI 6's scoping it confines abstract ones to the grader's domain.
		UnixSockets: s.landlockABI >= unixSocketsABI,
	}
	if uid := s.SlotUID(spec.Slot); uid >= 0 {
		ls.UID, ls.GID = uid, uid
	}
	ls.Signals = s.signalsBySeccomp()
	if ls.Signals && s.supervisor != nil {
		ls.Supervisor = s.supervisor.path
	}
	if s.landlockABI > 0 {
		ls.Landlock = &confine.FSPolicy{
			ABI:       s.landlockABI,
			ReadExec:  readPaths(interpreter, spec.ReadPaths),
			ReadWrite: []string{spec.ScratchDir},
		}
		ls.Landlock.ReadWrite = append(ls.Landlock.ReadWrite, systemReadWritePaths...)
	}
	return ls
}

// signalScopeABI is the first Landlock ABI whose domain scopes signals
// (LANDLOCK_SCOPE_SIGNAL) and abstract UNIX sockets.
const signalScopeABI = 6

// processBoundaryAdvice names the settings where every process boundary
// holds.
const processBoundaryAdvice = "grade as root (the gradegate Action's container gives graders their own uids), or on a kernel with Landlock ABI 6 or later"

// signalMechanism names what keeps a grader's signals inside its own
// processes: Landlock's signal scope, a uid of its own, or the seccomp
// filter (which then admits only the grader's own process group).
func (s *Sandbox) signalMechanism() string {
	switch {
	case s.landlockABI >= signalScopeABI:
		return "landlock"
	case s.setUID:
		return "uid"
	}
	return "seccomp"
}

// signalsBySeccomp reports whether the seccomp filter must hold the signal
// boundary: when neither a uid of the grader's own (the kernel refuses a
// signal to another uid without CAP_KILL) nor Landlock's signal scope
// keeps the grader's signals inside its own processes.
func (s *Sandbox) signalsBySeccomp() bool {
	return !s.setUID && s.landlockABI < signalScopeABI
}

// limits returns the resource limits of one grader process.
func (s *Sandbox) limits(spec Spec) []confine.Rlimit {
	l := []confine.Rlimit{
		{Name: "FSIZE", Resource: unix.RLIMIT_FSIZE, Value: FileSizeLimit},
		{Name: "NOFILE", Resource: unix.RLIMIT_NOFILE, Value: OpenFilesLimit},
		{Name: "NPROC", Resource: unix.RLIMIT_NPROC, Value: s.nproc},
		{Name: "CORE", Resource: unix.RLIMIT_CORE, Value: 0},
	}
	if spec.MemoryMB > 0 {
		l = append(l, confine.Rlimit{Name: "AS", Resource: unix.RLIMIT_AS, Value: uint64(spec.MemoryMB) << 20})
	}
	if spec.CPUSeconds > 0 {
		// The soft limit sends SIGXCPU, the hard one a second later
		// SIGKILL (setrlimit(2), RLIMIT_CPU).
		l = append(l, confine.Rlimit{Name: "CPU", Resource: unix.RLIMIT_CPU, Value: uint64(spec.CPUSeconds), Hard: uint64(spec.CPUSeconds) + 1})
	}
	return l
}

// Scratch creates a fresh scratch directory for the process in slot, owned by
// the uid that slot runs as and private to it (mode 0700). cleanup removes it
// and everything in it, also what the grader made unwritable.
func (s *Sandbox) Scratch(slot int) (dir string, cleanup func() error, err error) {
	if err := s.checkSlot(slot); err != nil {
		return "", nil, err
	}
	dir, err = os.MkdirTemp(s.scratchRoot, fmt.Sprintf("gradegate-scratch-%d-", slot))
	if err != nil {
		return "", nil, fmt.Errorf("sandbox: scratch directory: %w", err)
	}
	cleanup = func() error { return removeAll(dir) }
	if err := os.Chmod(dir, 0o700); err != nil {
		_ = cleanup()
		return "", nil, fmt.Errorf("sandbox: scratch directory: %w", err)
	}
	if uid := s.SlotUID(slot); uid >= 0 {
		if err := os.Chown(dir, uid, uid); err != nil {
			_ = cleanup()
			return "", nil, fmt.Errorf("sandbox: scratch directory: %w", &chownError{uid: uid, err: err})
		}
	}
	return dir, cleanup, nil
}

// chownError is a scratch directory that could not be given to the slot's
// uid: EPERM without CAP_CHOWN, EINVAL for a uid outside the user
// namespace's map (chown(2)).
type chownError struct {
	uid int
	err error
}

func (e *chownError) Error() string { return fmt.Sprintf("chown to uid %d: %v", e.uid, e.err) }
func (e *chownError) Unwrap() error { return e.err }

// Status reports which layers Command puts in force, as New's probe
// measured them.
func (s *Sandbox) Status() grading.Sandbox { return s.status }

// String renders the status the way every output shows it, e.g.
// "uid=60000 seccomp=on landlock=abi7 rlimits=on".
func (s *Sandbox) String() string { return StatusString(s.status) }

// StatusString renders st the way every output shows it, e.g.
// "uid=60000 seccomp=on landlock=abi7 rlimits=on signals=landlock". st.UID is slot 0's uid;
// slot n runs as st.UID+n.
func StatusString(st grading.Sandbox) string {
	if st.Unsandboxed {
		return "UNSANDBOXED: no seccomp, no landlock, no rlimits, uid unchanged"
	}
	onOff := func(b bool) string {
		if b {
			return "on"
		}
		return "off"
	}
	uid := "unchanged"
	if st.UID >= 0 {
		uid = fmt.Sprint(st.UID)
	}
	ll := "off(file permissions only)"
	if st.LandlockABI > 0 {
		ll = fmt.Sprintf("abi%d", st.LandlockABI)
	}
	line := fmt.Sprintf("uid=%s seccomp=%s landlock=%s rlimits=%s", uid, onOff(st.Seccomp), ll, onOff(st.Rlimits))
	if st.Signals != "" {
		line += " signals=" + st.Signals
	}
	return line
}

// CheckInterpreter reports whether graders can execute the interpreter at
// path: when gradegate runs as root, graders run as another uid, which needs
// search permission on every directory above the interpreter (a Python
// installed under /root, mode 0700, is out of reach).
func (s *Sandbox) CheckInterpreter(path string) error {
	if !filepath.IsAbs(path) {
		return fmt.Errorf("sandbox: interpreter %q: not an absolute path", path)
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return fmt.Errorf("sandbox: interpreter: %w", err)
	}
	if s.SlotUID(0) < 0 {
		return nil
	}
	return othersCanRun(path, real, s.SlotUID(0))
}

// OthersCanRun is CheckInterpreter for a sandbox that gives graders uids of
// their own, which a sandbox started as root does unless the machine
// forbids it: it needs no sandbox, so an interpreter can be known out of
// reach before the sandbox is up.
func OthersCanRun(path string) error {
	if !filepath.IsAbs(path) {
		return fmt.Errorf("sandbox: interpreter %q: not an absolute path", path)
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return fmt.Errorf("sandbox: interpreter: %w", err)
	}
	return othersCanRun(path, real, BaseUID)
}

// othersCanRun checks that uid, neither owner nor group, can search every
// directory above path and real and read and execute real.
func othersCanRun(path, real string, uid int) error {
	for _, p := range []string{path, real} {
		for dir := filepath.Dir(p); ; dir = filepath.Dir(dir) {
			fi, err := os.Stat(dir)
			if err != nil {
				return fmt.Errorf("sandbox: interpreter: %w", err)
			}
			if fi.Mode().Perm()&0o001 == 0 {
				return fmt.Errorf("sandbox: interpreter %s: directory %s (mode %v) is not searchable by the grader uids %d+; install the interpreter elsewhere or chmod o+x %s", path, dir, fi.Mode().Perm(), uid, dir)
			}
			if dir == "/" {
				break
			}
		}
	}
	fi, err := os.Stat(real)
	if err != nil {
		return fmt.Errorf("sandbox: interpreter: %w", err)
	}
	if fi.Mode().Perm()&0o005 != 0o005 {
		return fmt.Errorf("sandbox: interpreter %s (mode %v) is not readable and executable by the grader uids", real, fi.Mode().Perm())
	}
	return nil
}

// systemReadPaths are what a CPython interpreter and its C extensions read
// besides their own prefix: the dynamic loader's cache and libraries, time
// zone data, user and group names (getpass, pwd), CPU topology for thread
// pools (glibc's get_nprocs reads /sys/devices/system/cpu/online). Missing
// paths are skipped.
//
// /sys/fs/cgroup is not among them either: every cgroup.procs under it
// lists the pids of its processes, gradegate's among them.
//
// /proc is not among them, so a grader opens and lists nothing under it.
// Much of /proc is world-readable whatever the uid (every process's
// cmdline and status, /proc/net/unix with the socket paths of the whole
// machine), /proc/<pid>/fd lists for a process of the same uid without the
// ptrace check, and a Landlock rule cannot grant the grader's own
// /proc/<pid> alone: procfs makes a new inode for it whenever the kernel
// has dropped the cached one (fs/proc/base.c proc_pid_lookup), and the
// rule stays on the old. CPython needs none of /proc: subprocess closes
// descriptors with close_range(2), os.cpu_count reads /sys, numpy imports
// and computes, psutil imports (its calls that read /proc fail).
// Descriptors reopened through /proc/self/fd/N still work: path walks are
// not checked, and Landlock checks the file reached (a pipe, or a file in
// scratch).
var systemReadPaths = []string{
	"/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin",
	"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
	"/etc/localtime", "/etc/timezone", "/etc/passwd", "/etc/group",
	"/etc/nsswitch.conf", "/etc/mime.types",
	"/sys/devices/system/cpu",
	"/dev/urandom", "/dev/random", "/dev/zero",
}

// systemReadWritePaths are devices a grader may write besides its scratch.
var systemReadWritePaths = []string{"/dev/null"}

// readPaths lists the read-only (and executable) paths for a grader run by
// interpreter: its prefix (where its standard library and site-packages
// live), both before and after resolving symbolic links so a virtual
// environment and its base interpreter are covered, the caller's extra
// paths and the system paths.
func readPaths(interpreter string, extra []string) []string {
	var out []string
	add := func(p string) {
		if p == "" || p == "/" {
			return // never the whole file system
		}
		for _, q := range out {
			if q == p {
				return
			}
		}
		out = append(out, p)
	}
	for _, p := range []string{interpreter, resolve(interpreter)} {
		add(p)
		if prefix := filepath.Dir(filepath.Dir(p)); filepath.Base(filepath.Dir(p)) == "bin" {
			add(prefix)
		}
	}
	for _, p := range extra {
		add(p)
	}
	for _, p := range systemReadPaths {
		add(p)
	}
	return out
}

func resolve(p string) string {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return ""
	}
	return r
}

// processLimit returns RLIMIT_NPROC for graders. The kernel counts it per
// real uid: with a uid per slot the count starts near zero; with gradegate's
// own uid it includes every process and thread that uid already runs, so
// the limit adds the headroom to that count.
func processLimit(ownUID bool) uint64 {
	n := uint64(processHeadroom + 2*runtime.NumCPU())
	if ownUID {
		return n
	}
	return n + uint64(tasksOfUID(os.Getuid()))
}

// tasksOfUID counts the threads of all processes whose real uid is uid.
func tasksOfUID(uid int) int {
	n := 0
	for _, p := range procIDs() {
		if p.nuids > 0 && p.uids[0] == uid {
			n += p.threads
		}
	}
	return n
}

// closeInheritedOnExec marks every descriptor from 3 up close-on-exec.
// Go opens its own descriptors close-on-exec, and os/exec passes a child
// only 0-2 and ExtraFiles, but descriptors gradegate itself inherited
// without the flag (from a CI runner, a shell) would otherwise pass through
// every child into the grader. The ExtraFiles are unaffected: os/exec dups
// them to 3, 4, … in the child, which clears the flag.
func closeInheritedOnExec() error {
	// close_range(2) with CLOSE_RANGE_CLOEXEC, Linux 5.11.
	if err := unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC); err == nil {
		return nil
	}
	return closeOnExecFromProc()
}

// closeOnExecFromProc is closeInheritedOnExec for kernels before 5.11. It
// works in a process made non-dumpable by ProtectSelf too: /proc/self/fd
// then belongs to root, but the kernel lets a process list its own
// descriptors whatever the owner (fs/proc/fd.c proc_fd_permission).
func closeOnExecFromProc() error {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("sandbox: listing descriptors: %w", err)
	}
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd < 3 {
			continue
		}
		// The directory's own descriptor is closed by now: EBADF.
		_, _ = unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC)
	}
	return nil
}
