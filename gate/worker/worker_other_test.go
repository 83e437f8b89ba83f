//go:build !linux

package worker

import (
	"context"
	"errors"
	"testing"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/sandbox"
)

// TestPortableNewOffLinux: off Linux, New grades through the portable pool
// with an unsandboxed Sandbox, and refuses without one.
func TestPortableNewOffLinux(t *testing.T) {
	if _, err := New(context.Background(), Config{Source: []byte("def grade(s, i):\n    return 1.0\n"), Python: portablePython(t)}); !errors.Is(err, sandbox.ErrNotAvailable) {
		t.Errorf("New without an unsandboxed Sandbox: %v, want sandbox.ErrNotAvailable", err)
	}
	sb, err := sandbox.New(sandbox.WithUnsandboxed(true))
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(context.Background(), Config{Source: []byte("def grade(s, i):\n    return 1.0\n"), Python: portablePython(t), Sandbox: sb, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	got, err := p.Grade(context.Background(), []grading.Task{portableTask("a", nil)})
	if err != nil || got[0].Class != grading.ClassOK || !p.Sandbox().Unsandboxed {
		t.Errorf("Grade = %+v, %v; Sandbox %+v: want ok, unsandboxed", got, err, p.Sandbox())
	}
}
