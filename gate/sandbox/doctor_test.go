//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

func TestDoctor(t *testing.T) {
	s, err := New(WithLauncher(os.Args[0]), WithUnsandboxed(true))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rep := Doctor(ctx, s, python(t, newSandbox(t)))
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", text.String())
	if !rep.NetworkBoundary {
		t.Error("NetworkBoundary = false")
	}
	for _, c := range rep.Checks {
		if c.Status == CheckFail {
			t.Errorf("check failed: %+v", c)
		}
	}
	for _, want := range []string{"AF_INET socket refused", "write inside scratch", "RLIMIT_NPROC", "environment is exactly the allowlist", "interpreter in the sandbox"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"schema":"gradegate.doctor/v1"`, `"network_boundary":true`, `"layer":"seccomp"`, `"status":"ok"`} {
		if !bytes.Contains(b, []byte(key)) {
			t.Errorf("JSON lacks %s", key)
		}
	}
}

func TestDoctorWithoutPython(t *testing.T) {
	rep := Doctor(context.Background(), newSandbox(t), "")
	last := rep.Checks[len(rep.Checks)-1]
	if last.Layer != "python" || last.Status != CheckSkip {
		t.Errorf("last check = %+v, want a skipped python check", last)
	}
}
