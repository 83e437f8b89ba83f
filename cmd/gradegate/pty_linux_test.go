//go:build linux

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/gradegate/gradegate/gate/render"
)

// openPTY opens a pseudo-terminal pair with /dev/ptmx: the master, which
// the test reads, and the terminal a command writes to. Both close when the
// test ends.
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	fd := int(m.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		t.Fatalf("unlocking the pty: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		m.Close()
		t.Fatalf("pty number: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Fatalf("opening the pty: %v", err)
	}
	t.Cleanup(func() { s.Close(); m.Close() })
	return m, s
}

// drain reads the master until the terminal side is closed; Linux then
// answers EIO.
func drain(master *os.File) <-chan string {
	out := make(chan string, 1)
	go func() {
		var b bytes.Buffer
		_, err := io.Copy(&b, master)
		var pe *os.PathError
		if err != nil && !(errors.As(err, &pe) && errors.Is(pe.Err, syscall.EIO)) {
			b.WriteString("\nread error: " + err.Error())
		}
		out <- b.String()
	}()
	return out
}

// TestProgressOnTerminal: with stderr a real terminal, a run draws the
// bar there (through the line guard every other stderr line goes through),
// and clears it when grading ends; with NO_COLOR unset nothing else
// changes on stdout, which is a buffer.
func TestProgressOnTerminal(t *testing.T) {
	master, tty := openPTY(t)
	a := &app{getenv: func(string) string { return "" }, stderr: tty, tty: tty}
	if _, ok := a.progress(formatHuman).(*render.BarProgress); !ok {
		t.Fatalf("progress on a terminal = %T, want the bar", a.progress(formatHuman))
	}
	if p := a.progress(formatJSON); p != nil {
		t.Errorf("progress with --format json = %T, want none", p)
	}

	dir := t.TempDir()
	if code := execute(context.Background(), []string{"init", dir}, func(string) string { return "" }, io.Discard, io.Discard).code; code != exitPass {
		t.Fatalf("init: exit %d", code)
	}
	got := drain(master)
	var stdout bytes.Buffer
	code := execute(context.Background(), []string{"run", filepath.Join(dir, "gradegate.yaml")}, func(string) string { return "" }, &stdout, tty).code
	tty.Close()
	text := <-got
	if code != exitPass {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout.String(), text)
	}
	if !strings.Contains(text, "grading") || !strings.Contains(text, "/9") {
		t.Errorf("the terminal shows no bar:\n%q", text)
	}
	if !strings.HasPrefix(stdout.String(), "PASS") {
		t.Errorf("stdout:\n%s", stdout.String())
	}
}
