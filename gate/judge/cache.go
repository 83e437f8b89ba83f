package judge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// CacheMode says how a run uses the judge cache.
type CacheMode string

// Cache modes.
const (
	// CacheOff: no cache; every task is a call.
	CacheOff CacheMode = "off"
	// CacheRead replays recorded calls; a miss is a call that is not stored.
	CacheRead CacheMode = "read"
	// CacheWrite makes every call and records it, replacing what was there.
	CacheWrite CacheMode = "write"
	// CacheReadWrite replays recorded calls and records the misses.
	CacheReadWrite CacheMode = "readwrite"
)

// ParseCacheMode reads a --judge-cache-mode value.
func ParseCacheMode(s string) (CacheMode, error) {
	switch m := CacheMode(s); m {
	case CacheRead, CacheWrite, CacheReadWrite:
		return m, nil
	}
	return "", fmt.Errorf("must be read, write or readwrite, got %q", s)
}

func (m CacheMode) reads() bool  { return m == CacheRead || m == CacheReadWrite }
func (m CacheMode) writes() bool { return m == CacheWrite || m == CacheReadWrite }

// CacheSchema names the format of a cache file.
const CacheSchema = "gradegate.judge-cache/v1"

// Cache is a folder of recorded model calls, one file per request, named
// by the request's key: DIR/<first two hex digits>/<key>.json.
type Cache struct {
	Dir string
}

// entry is one recorded call: the exact request, the API's answer, and how
// long it took, so a replay reports the same duration.
type entry struct {
	Schema     string          `json:"schema"`
	Path       string          `json:"path"`
	Request    json.RawMessage `json:"request"`
	Response   json.RawMessage `json:"response"`
	DurationMS float64         `json:"duration_ms"`
	// Repeat is which ask of the request this is under gate.repeats; 0
	// (absent) for the first.
	Repeat int `json:"repeat,omitempty"`
}

func (c *Cache) file(key string) string {
	return filepath.Join(c.Dir, key[:2], key+".json")
}

// has reports whether a call is recorded, without reading it.
func (c *Cache) has(r request) bool {
	_, err := os.Stat(c.file(r.key))
	return err == nil
}

// get reads a recorded call. ok is false when none is recorded. A file that
// is too large, does not parse, or holds another request than its name
// says is an error: a tampered or corrupt cache fails the run rather than
// grade with a reply to some other prompt.
func (c *Cache) get(r request) (e entry, ok bool, err error) {
	name := c.file(r.key)
	// A cache may come from the repository: only a regular file is read,
	// never a link, a pipe or a device.
	info, err := os.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return entry{}, false, nil
	}
	if err != nil {
		return entry{}, false, fmt.Errorf("judge cache: %w", err)
	}
	if !info.Mode().IsRegular() {
		return entry{}, false, fmt.Errorf("judge cache: %s is not a regular file", name)
	}
	f, err := os.Open(name)
	if err != nil {
		return entry{}, false, fmt.Errorf("judge cache: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 2*maxBodyBytes+1))
	if err != nil {
		return entry{}, false, fmt.Errorf("judge cache: reading %s: %w", name, err)
	}
	if len(b) > 2*maxBodyBytes {
		return entry{}, false, fmt.Errorf("judge cache: %s is over %d bytes", name, 2*maxBodyBytes)
	}
	if err := json.Unmarshal(b, &e); err != nil {
		return entry{}, false, fmt.Errorf("judge cache: %s is not a cache entry: %w", name, err)
	}
	if e.Schema != CacheSchema {
		return entry{}, false, fmt.Errorf("judge cache: %s has schema %q, want %q", name, e.Schema, CacheSchema)
	}
	if e.Path != r.path || e.Repeat != r.repeat || !bytes.Equal(e.Request, r.body) && !bytes.Equal(compact(e.Request), r.body) {
		return entry{}, false, fmt.Errorf("judge cache: %s does not hold the request its name is the digest of", name)
	}
	return e, true, nil
}

// put records a call atomically: a reader sees the old file or the new
// one, never half of one.
func (c *Cache) put(r request, response []byte, durationMS float64) error {
	e := entry{Schema: CacheSchema, Path: r.path, Request: r.body, Response: compact(response), DurationMS: durationMS, Repeat: r.repeat}
	if !json.Valid(response) {
		return errors.New("judge cache: the response is not JSON")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		return fmt.Errorf("judge cache: %w", err)
	}
	name := c.file(r.key)
	dir := filepath.Dir(name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("judge cache: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("judge cache: %w", err)
	}
	_, werr := tmp.Write(buf.Bytes())
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("judge cache: writing %s: %w", name, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("judge cache: %w", err)
	}
	if err := os.Rename(tmp.Name(), name); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("judge cache: %w", err)
	}
	return nil
}

// compact removes insignificant space, so a cache file edited by hand
// (re-indented) still matches its request.
func compact(b []byte) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return b
	}
	return buf.Bytes()
}
