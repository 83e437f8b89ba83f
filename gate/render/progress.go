package render

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/schollz/progressbar/v3"
)

// The two ways a grading run shows its progress on stderr: a bar on a
// terminal, a plain line now and then in a log (GitHub Actions). Both
// satisfy the gate's Progress.

// IsTerminal reports whether w is a terminal (a file whose descriptor is a
// tty); a buffer, a pipe or a guard around one is not.
func IsTerminal(w io.Writer) bool {
	file, ok := w.(*os.File)
	return ok && file != nil && (isatty.IsTerminal(file.Fd()) || isatty.IsCygwinTerminal(file.Fd()))
}

// NewBarProgress draws a progress bar on the terminal w.
func NewBarProgress(w io.Writer) *BarProgress { return &BarProgress{w: w} }

// BarProgress draws a progress bar (done/total, cases per second, time
// left) with progressbar.
type BarProgress struct {
	w   io.Writer
	bar *progressbar.ProgressBar
}

func (b *BarProgress) Start(total int) {
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

func (b *BarProgress) Graded(done int) { b.bar.Set(done) }

func (b *BarProgress) Finish() { b.bar.Finish() }

// NewLineProgress writes a plain line to w at most once per every, read on
// the clock now, for logs that are not terminals (GitHub Actions).
func NewLineProgress(w io.Writer, now func() time.Time, every time.Duration) *LineProgress {
	return &LineProgress{w: w, now: now, every: every}
}

// LineProgress writes a plain line at most once per period.
type LineProgress struct {
	w     io.Writer
	now   func() time.Time
	every time.Duration

	total int
	start time.Time
	last  time.Time
	done  int
	calls int
}

func (l *LineProgress) Start(total int) {
	l.total = total
	l.start = l.now()
	l.last = l.start
}

func (l *LineProgress) Graded(done int) {
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

func (l *LineProgress) Finish() {
	if l.done > 0 {
		l.line(l.now())
	}
}

func (l *LineProgress) line(now time.Time) {
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
