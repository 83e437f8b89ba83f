//go:build linux

package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gradegate/gradegate/gate/grading"
	"golang.org/x/sys/unix"
)

// DefaultScratchBudget is how much disk one grader process and everything
// it starts may hold in its scratch directory at once, over all files
// together, when Spec.ScratchBytes is 0: 1 GiB, as OpenAI's hosted graders
// have. (RLIMIT_FSIZE bounds each file to FileSizeLimit as well.)
const DefaultScratchBudget = 1 << 30

// Budgets are resource limits no rlimit can hold for a grader's processes
// together. RLIMIT_AS bounds the address space of each process, and
// RLIMIT_FSIZE each file; a grader that forks could still add both up
// (eight children of a 256 MB grader held 1.5 GB). Without a delegated
// cgroup (the action's container mounts /sys/fs/cgroup read-only, and a
// CI runner's user owns none), gradegate measures from outside instead:
// every memoryInterval it adds up the anonymous and shared resident memory
// (RssAnon and RssShmem, from the world-readable /proc/<pid>/status: see
// memoryPages) of every process in the grader's process group, which the
// grader cannot leave (setsid and setpgid are refused), and every
// diskInterval the blocks allocated to the files in its scratch directory.
// Past either budget it kills the whole group, and the grader's outcome is
// memory_exceeded or sandbox_violation.
//
// Memory no process maps is refused rather than counted: memfd_create and
// System V shared memory are refused by the seccomp filter, Landlock keeps
// /dev/shm and every other tmpfs out of reach, and when the scratch
// directory itself is on a tmpfs its files count against memory_mb as
// well as against the disk budget.
//
// What measuring from outside leaves open: a grader may overshoot for up
// to one interval (fallocate is refused, so disk fills no faster than it
// is written); a forked child's pages shared copy-on-write with its parent
// count in both until either writes them, as does a shared region mapped
// by several of them; and a file deleted while still open no longer counts
// (each still holds at most FileSizeLimit, for at most OpenFilesLimit
// descriptors per process; on a tmpfs scratch that is memory).
//
// Listing every process on the machine is the expensive part of a check
// (milliseconds with a few hundred processes), so a Guard does it once a
// second (fullScanInterval); in between it follows the group's known
// processes and their children (/proc/<pid>/task/<tid>/children), which
// finds every fork except a child orphaned within one interval, which the
// next full scan finds.
const (
	memoryInterval   = 50 * time.Millisecond
	diskInterval     = 200 * time.Millisecond
	fullScanInterval = time.Second
)

// BudgetError is a budget a grader went past; gradegate killed its process
// group.
type BudgetError struct {
	Class   grading.Class // memory_exceeded or sandbox_violation
	Message string
}

func (e *BudgetError) Error() string { return e.Message }

// Guard holds a grader's process group to its Spec's total memory
// (MemoryMB, over all its processes) and to its scratch budget.
type Guard struct {
	pgid   int
	memory int64 // bytes; 0: none
	// inMemory: the scratch directory is on a tmpfs (or ramfs), so the
	// disk it holds is memory and counts against memory too.
	inMemory bool
	disk     int64 // bytes
	scratch  string

	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
	mu       sync.Mutex
	exceeded *BudgetError
	// lastDisk is the scratch directory's size at the last measure.
	lastDisk atomic.Int64
}

// Guard starts guarding the process group of the grader spec describes,
// whose leader is pid (a process Command started). Stop it when the
// grader has ended. A nil Sandbox guards nothing.
func (s *Sandbox) Guard(spec Spec, pid int) *Guard {
	g := &Guard{pgid: pid, scratch: spec.ScratchDir, disk: spec.ScratchBytes, stop: make(chan struct{}), done: make(chan struct{})}
	if s == nil || pid <= 0 {
		close(g.done)
		return g
	}
	if g.disk <= 0 {
		g.disk = DefaultScratchBudget
	}
	if spec.MemoryMB > 0 {
		g.memory = int64(spec.MemoryMB) << 20
		var st unix.Statfs_t
		if g.scratch != "" && unix.Statfs(g.scratch, &st) == nil {
			g.inMemory = st.Type == unix.TMPFS_MAGIC || st.Type == unix.RAMFS_MAGIC
		}
	}
	go g.watch()
	return g
}

// Stop ends the guarding; it is safe to call more than once, and on a nil
// Guard.
func (g *Guard) Stop() {
	if g == nil {
		return
	}
	g.stopOnce.Do(func() { close(g.stop) })
	<-g.done
}

// Exceeded returns the budget the grader went past, or nil.
func (g *Guard) Exceeded() *BudgetError {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.exceeded
}

// watch holds the group to its budgets until Stop: memory and disk each
// on a goroutine of its own, so that a walk of a large scratch directory
// never holds up a memory check.
func (g *Guard) watch() {
	defer close(g.done)
	var wg sync.WaitGroup
	if g.memory > 0 {
		wg.Go(g.watchMemory)
	}
	if g.scratch != "" {
		wg.Go(g.watchDisk)
	}
	wg.Wait()
}

func (g *Guard) watchMemory() {
	t := time.NewTicker(memoryInterval)
	defer t.Stop()
	fullEvery := int(fullScanInterval / memoryInterval)
	group := &processGroup{pgid: g.pgid, members: map[int]bool{g.pgid: true}, buf: make([]byte, 4096)}
	for tick := 0; ; tick++ {
		select {
		case <-g.stop:
			return
		case <-t.C:
		}
		if tick%fullEvery == 0 {
			group.scanAll()
		} else {
			group.follow()
		}
		used := group.memory()
		if g.inMemory {
			// Its files are memory too.
			used += g.lastDisk.Load()
		}
		if used > g.memory {
			what := "anonymous and shared memory"
			if g.inMemory {
				what += ", and the files of its scratch directory, which is in memory"
			}
			g.kill(&BudgetError{Class: grading.ClassMemoryExceeded, Message: fmt.Sprintf(
				"the grader's processes together held %.1f MiB, past memory_mb=%d (the total of every process it started: %s); they were killed",
				mib(used), g.memory>>20, what)})
			return
		}
	}
}

func (g *Guard) watchDisk() {
	t := time.NewTicker(diskInterval)
	defer t.Stop()
	for {
		select {
		case <-g.stop:
			return
		case <-t.C:
		}
		if g.measureDisk() != nil {
			return
		}
	}
}

// measureDisk measures the scratch directory and kills the group when it
// holds more than the budget.
func (g *Guard) measureDisk() *BudgetError {
	u := measureScratch(g.scratch, defaultScratchBounds)
	g.lastDisk.Store(u.bytes)
	var msg string
	switch {
	case u.problem != "":
		msg = "the grader's scratch directory " + u.problem + "; its processes were killed"
	case u.bytes > g.disk:
		msg = fmt.Sprintf("the grader's scratch directory held %.1f MiB, past its %.0f MiB disk budget; its processes were killed",
			mib(u.bytes), mib(g.disk))
	default:
		return nil
	}
	e := &BudgetError{Class: grading.ClassSandboxViolation, Message: msg}
	g.kill(e)
	return g.Exceeded()
}

// CheckDisk measures the scratch directory now, when a case has just
// ended, so that a case that filled it between two of the guard's own
// measures is the one that answers for it. Measuring costs a walk of the
// directory, so it is done only when long is set (a case that ran long
// enough to write the budget; a fast one cannot) or when the last measure
// found it more than half full (cases that each add a little). It returns
// the budget the grader went past, or nil; past it, the group is killed.
func (g *Guard) CheckDisk(long bool) *BudgetError {
	if g == nil || g.scratch == "" || g.disk <= 0 {
		return nil
	}
	// The common case, a fast case with scratch nearly empty, costs one
	// atomic load: it ends every case.
	if !long && g.lastDisk.Load()*2 <= g.disk {
		return nil
	}
	if e := g.Exceeded(); e != nil {
		return e
	}
	return g.measureDisk()
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// kill records e, unless a budget was already found exceeded (the first
// is the one the grader answers for), and kills the group.
func (g *Guard) kill(e *BudgetError) {
	g.mu.Lock()
	if g.exceeded == nil {
		g.exceeded = e
	}
	g.mu.Unlock()
	_ = syscall.Kill(-g.pgid, syscall.SIGKILL)
}

// processGroup is what a Guard knows of a process group: the pids found in
// it so far.
type processGroup struct {
	pgid    int
	members map[int]bool
	buf     []byte
}

// scanAll finds every process of the group by listing /proc.
func (pg *processGroup) scanAll() {
	d, err := os.Open("/proc")
	if err != nil {
		return
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	clear(pg.members)
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		if procGroup(name, pg.buf) == pg.pgid {
			if pid, err := strconv.Atoi(name); err == nil {
				pg.members[pid] = true
			}
		}
	}
}

// follow adds the children of the known processes (their threads'
// /proc/<pid>/task/<tid>/children) that are in the group, repeatedly, so
// grandchildren count too.
func (pg *processGroup) follow() {
	queue := make([]int, 0, len(pg.members))
	for pid := range pg.members {
		queue = append(queue, pid)
	}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		task := "/proc/" + strconv.Itoa(pid) + "/task"
		d, err := os.Open(task)
		if err != nil {
			continue
		}
		tids, _ := d.Readdirnames(-1)
		d.Close()
		for _, tid := range tids {
			for _, f := range bytes.Fields(readSmall(task+"/"+tid+"/children", pg.buf)) {
				child, err := strconv.Atoi(string(f))
				if err != nil || pg.members[child] {
					continue
				}
				if procGroup(string(f), pg.buf) == pg.pgid {
					pg.members[child] = true
					queue = append(queue, child)
				}
			}
		}
	}
}

// memory adds up the anonymous and shared resident memory of the group's
// known processes (memoryPages), forgetting those that have exited or left
// the group (a pid may be reused).
func (pg *processGroup) memory() int64 {
	page := int64(os.Getpagesize())
	var total int64
	for pid := range pg.members {
		name := strconv.Itoa(pid)
		if procGroup(name, pg.buf) != pg.pgid {
			delete(pg.members, pid)
			continue
		}
		total += memoryPages(name, pg.buf) * page
	}
	return total
}

// groupMemory adds up the memory of every process in process group pgid,
// listing /proc to find them.
func groupMemory(pgid int) int64 {
	pg := &processGroup{pgid: pgid, members: map[int]bool{}, buf: make([]byte, 4096)}
	pg.scanAll()
	return pg.memory()
}

// readSmall reads a small /proc file into buf (a children list longer
// than buf is cut; the next full scan finds the rest).
func readSmall(path string, buf []byte) []byte {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer unix.Close(fd)
	n, err := unix.Read(fd, buf)
	if err != nil || n <= 0 {
		return nil
	}
	return buf[:n]
}

// procGroup returns the process group of /proc/<pid>/stat, or -1.
func procGroup(pid string, buf []byte) int {
	b := readSmall("/proc/"+pid+"/stat", buf)
	// "pid (comm) state ppid pgrp ...": comm may hold spaces and
	// parentheses, so the fields start after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return -1
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 3 {
		return -1
	}
	g, err := strconv.Atoi(string(f[2]))
	if err != nil {
		return -1
	}
	return g
}

// memoryPages returns the pages /proc/<pid>/status counts as the
// process's own memory: RssAnon (anonymous) plus RssShmem (shared memory:
// MAP_SHARED anonymous mappings, /dev/zero shared mappings, tmpfs and memfd
// pages it maps). File pages backed by a disk (RssFile) are left out: the
// kernel can drop them. A shared region mapped by several of the grader's
// processes counts once in each, which overstates, never understates.
func memoryPages(pid string, buf []byte) int64 {
	b := readSmall("/proc/"+pid+"/status", buf)
	var kb int64
	for _, key := range [][]byte{[]byte("RssAnon:"), []byte("RssShmem:")} {
		i := bytes.Index(b, key)
		if i < 0 {
			continue
		}
		rest := b[i+len(key):]
		if j := bytes.IndexByte(rest, '\n'); j >= 0 {
			rest = rest[:j]
		}
		f := bytes.Fields(rest) // "1234 kB"
		if len(f) == 0 {
			continue
		}
		if v, err := strconv.ParseInt(string(f[0]), 10, 64); err == nil {
			kb += v
		}
	}
	return kb << 10 / int64(os.Getpagesize())
}

// GroupHasOthers reports whether process group pgid holds a process other
// than its leader pgid, zombies included: processes a grader started and
// left behind, which still count against the slot uid's RLIMIT_NPROC.
func GroupHasOthers(pgid int) bool {
	d, err := os.Open("/proc")
	if err != nil {
		return true // unknown: the caller must not assume a clean group
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	buf := make([]byte, 512)
	own := strconv.Itoa(pgid)
	for _, name := range names {
		if name == own || name[0] < '0' || name[0] > '9' {
			continue
		}
		if procGroup(name, buf) == pgid {
			return true
		}
	}
	return false
}
