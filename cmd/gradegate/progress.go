package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/schollz/progressbar/v3"

	"github.com/gradegate/gradegate/gate"
)

// actionsProgressEvery is how often a run in GitHub Actions logs a
// progress line: often enough to show a long run is alive, rarely enough
// to keep the log readable.
const actionsProgressEvery = 10 * time.Second

// progress picks how a grading run shows its progress on stderr: a bar on
// a terminal, a plain line every 10 seconds in GitHub Actions, and nothing
// with --format json or when stderr is not a terminal outside Actions.
func (a *app) progress(f format) gate.Progress {
	if f == formatJSON {
		return nil
	}
	if a.getenv("GITHUB_ACTIONS") == "true" {
		return &lineProgress{w: a.stderr, now: a.now, every: actionsProgressEvery}
	}
	if !isTerminal(a.tty) {
		return nil
	}
	return &barProgress{w: a.tty}
}

// isTerminal reports whether w is a terminal (a file whose descriptor is a
// tty); a buffer, a pipe or a guard around one is not.
func isTerminal(w io.Writer) bool {
	file, ok := w.(*os.File)
	return ok && file != nil && (isatty.IsTerminal(file.Fd()) || isatty.IsCygwinTerminal(file.Fd()))
}

// barProgress draws a progress bar (done/total, cases per second, time
// left) with progressbar.
type barProgress struct {
	w   io.Writer
	bar *progressbar.ProgressBar
}

func (b *barProgress) Start(total int) {
	max := int64(total)
	if total <= 0 {
		max = -1 // unknown: a spinner with the count
	}
	b.bar = progressbar.NewOptions64(max,
		progressbar.OptionSetWriter(b.w),
		progressbar.OptionSetDescription("grading"),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("cases"),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetWidth(30),
	)
}

func (b *barProgress) Graded(done int) { b.bar.Set(done) }

func (b *barProgress) Finish() { b.bar.Finish() }

// lineProgress writes a plain line at most once per period, for logs that
// are not terminals (GitHub Actions).
type lineProgress struct {
	w     io.Writer
	now   func() time.Time
	every time.Duration

	total int
	start time.Time
	last  time.Time
	done  int
	calls int
}

func (l *lineProgress) Start(total int) {
	l.total = total
	l.start = l.now()
	l.last = l.start
}

func (l *lineProgress) Graded(done int) {
	l.done = done
	// Reading the clock on every case would cost more than the line.
	if l.calls++; l.calls%64 != 0 {
		return
	}
	now := l.now()
	if now.Sub(l.last) < l.every {
		return
	}
	l.last = now
	l.line(now)
}

func (l *lineProgress) Finish() {
	if l.done > 0 {
		l.line(l.now())
	}
}

func (l *lineProgress) line(now time.Time) {
	elapsed := now.Sub(l.start)
	rate := 0.0
	if elapsed > 0 {
		rate = float64(l.done) / elapsed.Seconds()
	}
	msg := fmt.Sprintf("gradegate: graded %d", l.done)
	if l.total > 0 {
		msg += fmt.Sprintf(" of %d", l.total)
	}
	msg += fmt.Sprintf(" cases (%.0f/s", rate)
	if l.total > l.done && rate > 0 {
		left := time.Duration(float64(l.total-l.done) / rate * float64(time.Second)).Round(time.Second)
		msg += fmt.Sprintf(", about %s left", left)
	}
	fmt.Fprintln(l.w, msg+")")
}
