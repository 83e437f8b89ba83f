package worker

import (
	"context"
	"errors"
	"testing"
	"time"
)

// fakeSlot stands in for a pool's slot: its warmth, and a name to tell
// which one acquire took.
type fakeSlot struct {
	name string
	warm int
}

// fakeProc counts its kills.
type fakeProc struct{ kills int }

func (p *fakeProc) kill() { p.kills++ }

func TestSlotsAcquirePrefersWarm(t *testing.T) {
	tests := []struct {
		name     string
		released []fakeSlot // in this order
		want     []string   // the order acquire takes them in
	}{
		{"all cold: the last released first", []fakeSlot{{"a", 0}, {"b", 0}, {"c", 0}}, []string{"c", "b", "a"}},
		{"a running one before a cold one released later", []fakeSlot{{"run", 2}, {"cold", 0}}, []string{"run", "cold"}},
		{"a loading one before a cold one", []fakeSlot{{"load", 1}, {"cold", 0}}, []string{"load", "cold"}},
		{"a running one before a loading one", []fakeSlot{{"run", 2}, {"load", 1}, {"cold", 0}}, []string{"run", "load", "cold"}},
		{"among running ones, the last released", []fakeSlot{{"r1", 2}, {"cold", 0}, {"r2", 2}}, []string{"r2", "r1", "cold"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s slots[*fakeSlot, *fakeProc]
			s.init(len(tt.released), func(f *fakeSlot) int { return f.warm })
			for i := range tt.released {
				s.release(&tt.released[i])
			}
			for _, want := range tt.want {
				got, err := s.acquire(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if got.name != want {
					t.Fatalf("acquire took %s, want %s", got.name, want)
				}
			}
		})
	}
}

func TestSlotsAcquireWaitsForARelease(t *testing.T) {
	var s slots[*fakeSlot, *fakeProc]
	s.init(1, func(*fakeSlot) int { return 0 })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := s.acquire(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("acquire with no free slot = %v, want the context's end", err)
	}
	s.release(&fakeSlot{name: "a"})
	if got, err := s.acquire(context.Background()); err != nil || got.name != "a" {
		t.Fatalf("acquire after a release = %v, %v", got, err)
	}
}

func TestSlotsShutKillsTheLiveAndKeepsTheFirstReason(t *testing.T) {
	var s slots[*fakeSlot, *fakeProc]
	s.init(1, func(*fakeSlot) int { return 0 })
	a, b := &fakeProc{}, &fakeProc{}
	if err := s.track(a); err != nil {
		t.Fatal(err)
	}
	if err := s.track(b); err != nil {
		t.Fatal(err)
	}
	s.forget(b, 7)
	first := errors.New("first")
	s.markClosed(first)
	s.shut(errors.New("second"))
	if a.kills != 1 || b.kills != 0 {
		t.Fatalf("kills: live %d, forgotten %d; want 1 and 0", a.kills, b.kills)
	}
	if got := s.closedReason(); got != first {
		t.Fatalf("closedReason = %v, want the first reason", got)
	}
	if !s.closedBy(errors.Join(errors.New("x"), first)) || s.closedBy(errors.New("other")) {
		t.Fatal("closedBy does not follow the reason")
	}
	if err := s.track(&fakeProc{}); err != first {
		t.Fatalf("track after close = %v, want the reason, for the caller to stop it", err)
	}
	if got := s.peakBuffered.Load(); got != 7 {
		t.Fatalf("peakBuffered = %d, want 7", got)
	}
	s.forget(a, 3)
	if got := s.peakBuffered.Load(); got != 7 {
		t.Fatalf("a lower peak moved peakBuffered to %d", got)
	}
}
