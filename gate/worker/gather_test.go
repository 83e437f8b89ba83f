//go:build linux

package worker

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestGatherWait(t *testing.T) {
	tests := []struct {
		name     string
		caseTime time.Duration
		queued   int
		want     time.Duration
	}{
		{"case time not yet known", 0, 1000, 0},
		{"too little queued", 10 * time.Microsecond, 79, 0},
		{"just enough queued", 10 * time.Microsecond, 80, gatherFor},
		{"a fast grader's window", 5 * time.Microsecond, 1024, gatherFor},
		{"one slow case queued", time.Second, 1, gatherFor},
	}
	for _, tt := range tests {
		if got := gatherWait(tt.caseTime, tt.queued); got != tt.want {
			t.Errorf("%s: gatherWait(%v, %d) = %v, want %v", tt.name, tt.caseTime, tt.queued, got, tt.want)
		}
	}
}

// shellProc starts script under /bin/sh as a worker process: it writes its
// results to fd 4, as a worker does.
func shellProc(t *testing.T, script string) *proc {
	t.Helper()
	pr, err := startProc(exec.Command("/bin/sh", "-c", script), 1<<20, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		pr.kill()
		_ = pr.stop()
	})
	return pr
}

// readLines pumps pr, letting results gather for wait, until it holds
// complete response lines, and takes them, joined by spaces.
func readLines(t *testing.T, pr *proc, pending *queue[byte], deadline time.Time, wait time.Duration) string {
	t.Helper()
	for {
		if ev := pr.pump(pending, deadline, 1<<20, wait); ev != alive {
			t.Fatalf("pump: %v, want alive", ev)
		}
		var got []string
		for {
			line, _ := pr.nextLine(1 << 20)
			if line == nil {
				break
			}
			got = append(got, string(line))
		}
		if len(got) > 0 {
			return strings.Join(got, " ")
		}
	}
}

// TestPumpDoesNotHoldBack: pump reads a result as soon as it comes when
// the one before came longer than gatherGap ago (b, although pump may wait
// 500 ms and c follows 100 ms later), or when it is given no wait (c).
func TestPumpDoesNotHoldBack(t *testing.T) {
	t.Parallel()
	pr := shellProc(t, `printf 'a\n' >&4; sleep 0.2; printf 'b\n' >&4; sleep 0.1; printf 'c\n' >&4; sleep 30`)
	var pending queue[byte]
	deadline := time.Now().Add(time.Minute)
	if got := readLines(t, pr, &pending, deadline, 0); got != "a" {
		t.Fatalf("first read: %q, want a", got)
	}
	pr.lastRead = time.Now().Add(-time.Second)
	if got := readLines(t, pr, &pending, deadline, 500*time.Millisecond); got != "b" {
		t.Errorf("after a result a second old: read %q, want b alone (results further apart than gatherGap are not held back)", got)
	}
	pr.lastRead = time.Now()
	if got := readLines(t, pr, &pending, deadline, 0); got != "c" {
		t.Errorf("without a wait, c 100 ms after b: read %q, want c alone", got)
	}
}

// TestPumpGathersFastResults: results that come close together are read
// with one wake-up when pump may wait for them: b and c come 20 and 50 ms
// after a, and a wait of 500 ms right after a was read lets both arrive.
func TestPumpGathersFastResults(t *testing.T) {
	t.Parallel()
	pr := shellProc(t, `printf 'a\n' >&4; sleep 0.02; printf 'b\n' >&4; sleep 0.03; printf 'c\n' >&4; sleep 30`)
	var pending queue[byte]
	deadline := time.Now().Add(time.Minute)
	if got := readLines(t, pr, &pending, deadline, 0); got != "a" {
		t.Fatalf("first read: %q, want a", got)
	}
	pr.lastRead = time.Now()
	if got := readLines(t, pr, &pending, deadline, 500*time.Millisecond); got != "b c" {
		t.Errorf("after a wait: read %q, want \"b c\": pump read without letting the results gather", got)
	}
}

// TestGatherNoticesExit: a worker that exits while pump lets results
// gather is noticed at once, not after the wait (gather watches its pidfd;
// the SIGCHLD of a child of this process can end the wait too).
func TestGatherNoticesExit(t *testing.T) {
	t.Parallel()
	pr := shellProc(t, `printf 'a\n' >&4; sleep 0.05; exit 3`)
	if pr.pidfd < 0 {
		t.Skip("no pidfd_open on this kernel: the wait cannot watch the exit")
	}
	var pending queue[byte]
	deadline := time.Now().Add(10 * time.Minute)
	if got := readLines(t, pr, &pending, deadline, 0); got != "a" {
		t.Fatalf("first read: %q, want a", got)
	}
	pr.lastRead = time.Now()
	done := make(chan exchangeResult, 1)
	go func() { done <- pr.pump(&pending, deadline, 1<<20, 5*time.Minute) }()
	select {
	case ev := <-done:
		if ev != died {
			t.Errorf("pump after the exit: %v, want died", ev)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("pump still waits 30 s after the worker exited: the wait does not watch the pidfd")
	}
}
