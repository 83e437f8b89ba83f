package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gradegate/gradegate/gate/grading"
)

// settled waits until len(out) has not changed for a while, and returns it.
func settled(t *testing.T, out chan *request) int {
	t.Helper()
	n, since := len(out), time.Now()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if m := len(out); m != n {
			n, since = m, time.Now()
		} else if time.Since(since) > 50*time.Millisecond {
			return n
		}
	}
	t.Fatal("the feed never settled")
	return 0
}

// TestFeedBoundsBytesAhead: the feed queues as many small requests as its
// channel holds, but rows of a megabyte only up to aheadBytes; taken out,
// every request arrives, in order.
func TestFeedBoundsBytesAhead(t *testing.T) {
	for _, tt := range []struct {
		name      string
		itemBytes int
		rows      int
		wantAhead int // requests queued once the feed waits
	}{
		{"small rows fill the channel", 100, 3000, 1024},
		{"large rows stop at aheadBytes", 1 << 20, 40, aheadBytes / (1 << 20)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			item := json.RawMessage(`{"doc": "` + strings.Repeat("x", tt.itemBytes) + `"}`)
			made := 0
			next := func() (grading.Task, bool, error) {
				if made == tt.rows {
					return grading.Task{}, false, nil
				}
				made++
				return grading.Task{ID: fmt.Sprint(made), Sample: json.RawMessage(`{}`), Item: item}, true, nil
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			out := make(chan *request, 1024)
			done := make(chan struct{})
			go func() {
				defer close(done)
				feed(ctx, requestShape{}, next, 1, out, func(err error) { t.Error(err) })
			}()
			// A large request is a little over its item's size, so one
			// fewer fits.
			if got := settled(t, out); got != tt.wantAhead && got != tt.wantAhead-1 {
				t.Errorf("%d requests queued ahead, want %d", got, tt.wantAhead)
			}
			seq := 0
			for r := range out {
				if r.seqs[0] != seq {
					t.Fatalf("request %d came as %d", seq, r.seqs[0])
				}
				seq++
			}
			<-done
			if seq != tt.rows {
				t.Errorf("%d requests, want %d", seq, tt.rows)
			}
		})
	}
}

func TestAheadQueue(t *testing.T) {
	var q aheadQueue
	for _, n := range []int{10, 20, 30} {
		q.sent(n)
	}
	for _, tt := range []struct{ inChannel, want int }{{3, 60}, {2, 50}, {2, 50}, {0, 0}} {
		if got := q.queued(tt.inChannel); got != tt.want {
			t.Errorf("queued(%d) = %d, want %d", tt.inChannel, got, tt.want)
		}
	}
	q.sent(5)
	if got := q.queued(1); got != 5 {
		t.Errorf("after another: queued(1) = %d, want 5", got)
	}
}
