package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gradegate/gradegate/gate/results"
)

var update = flag.Bool("update", false, "record the judge example's cache again against the fake model")

const (
	judgeExample = "../../testdata/examples/judge"
	judgeKey     = "sk-judge-test-key-0123456789-TOPSECRET"
	judgePrefix  = "/prefix/v1"
)

// fakeModel is OpenAI's chat completions endpoint with a deterministic
// judge: it scores 5 when the answer contains the reference, 1 otherwise.
// It is mounted under a path prefix, so an absolute-URL bug fails.
type fakeModel struct {
	srv      *httptest.Server
	requests atomic.Int64
}

var promptRE = regexp.MustCompile(`Reference: (.*)\nAnswer: (.*)`)

func newFakeModel(t *testing.T) *fakeModel {
	t.Helper()
	f := &fakeModel{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+judgePrefix+"/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
		if r.Header.Get("Authorization") != "Bearer "+judgeKey {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s"}}`, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
			return
		}
		var body struct {
			Model    string                     `json:"model"`
			Messages []struct{ Content string } `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body.Messages) == 0 {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		m := promptRE.FindStringSubmatch(body.Messages[len(body.Messages)-1].Content)
		score, why := 1, "the answer does not state the reference"
		if m != nil && strings.Contains(strings.ToLower(m[2]), strings.ToLower(m[1])) {
			score, why = 5, "the answer states the reference"
		}
		reply, _ := json.Marshal(map[string]any{"steps": []any{map[string]string{"description": "compare with the reference", "conclusion": why}}, "result": score})
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"chatcmpl-fake","object":"chat.completion","created":1764500000,"model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":%q,"refusal":null},"finish_reason":"stop"}],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`,
			body.Model, reply, 60+len(m), 20, 80+len(m))
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

// judgeEnv is a process environment for a judge run.
func judgeEnv(vars ...string) func(string) string {
	env := map[string]string{"NO_COLOR": "1"}
	for i := 0; i+1 < len(vars); i += 2 {
		env[vars[i]] = vars[i+1]
	}
	return func(k string) string { return env[k] }
}

func runCLI(t *testing.T, getenv func(string) string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, getenv, &out, &errb)
	return code, out.String(), errb.String()
}

// copyExample copies the judge example (cache included) to a temp folder.
func copyExample(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(judgeExample, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(judgeExample, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func readJudgeResults(t *testing.T, name string) *results.Results {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var r results.Results
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

// TestJudgeExampleCache replays the shipped example from its committed
// cache with no key and no network; -update records the cache again
// against the fake model.
func TestJudgeExampleCache(t *testing.T) {
	manifestPath := filepath.Join(judgeExample, "gradegate.yaml")
	cache := filepath.Join(judgeExample, "judge-cache")
	if *update {
		fake := newFakeModel(t)
		if err := os.RemoveAll(cache); err != nil {
			t.Fatal(err)
		}
		code, out, errs := runCLI(t, judgeEnv("OPENAI_API_KEY", judgeKey, "OPENAI_BASE_URL", fake.srv.URL+judgePrefix),
			"run", manifestPath, "--judge-cache", cache, "--judge-cache-mode", "write")
		if code != exitPass {
			t.Fatalf("recording: exit %d\n%s\n%s", code, out, errs)
		}
	}
	results := filepath.Join(t.TempDir(), "r.json")
	code, out, errs := runCLI(t, judgeEnv(), "run", manifestPath, "--judge-cache", cache, "--judge-cache-mode", "read", "--results", results)
	if code != exitPass {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	res := readJudgeResults(t, results)
	if u := res.Judge; u == nil || u.Calls != 0 || u.Cached != 10 || u.InvalidReplies != 0 {
		t.Errorf("judge = %+v, want 10 replayed calls and none made", u)
	}
	if !strings.Contains(out, "judge: score_model gpt-4o-mini-2024-07-18 (chat_completions): 0 calls, 10 cached") {
		t.Errorf("stdout lacks the judge line:\n%s", out)
	}
}

// TestJudgeRun runs a model grader end to end: recorded against the fake,
// replayed with the fake stopped and no key, byte for byte; the key never
// shows; a miss without a key, a budget, an alias and mutate each say so.
func TestJudgeRun(t *testing.T) {
	fake := newFakeModel(t)
	dir := copyExample(t)
	manifestPath := filepath.Join(dir, "gradegate.yaml")
	cache := filepath.Join(t.TempDir(), "cache")
	withKey := judgeEnv("OPENAI_API_KEY", judgeKey, "OPENAI_BASE_URL", fake.srv.URL+judgePrefix)

	first := filepath.Join(dir, "first.json")
	// Both runs place the blind canaries alike (--canary-seed), as a replay
	// that must match the recorded run byte for byte does.
	code, out1, err1 := runCLI(t, withKey, "run", manifestPath, "--judge-cache", cache, "--results", first, "--format", "markdown", "--canary-seed", "7")
	if code != exitPass {
		t.Fatalf("first run: exit %d\n%s\n%s", code, out1, err1)
	}
	if fake.requests.Load() != 10 {
		t.Errorf("%d requests, want 10 (2 canaries and 8 cases; the corrupt fixture is never sent)", fake.requests.Load())
	}
	if !strings.Contains(out1, "judge: score\\_model") && !strings.Contains(out1, "judge: score_model") {
		t.Errorf("markdown lacks the judge line:\n%s", out1)
	}
	fake.srv.Close()

	second := filepath.Join(dir, "second.json")
	code, out2, err2 := runCLI(t, judgeEnv(), "run", manifestPath, "--judge-cache", cache, "--judge-cache-mode", "read", "--results", second, "--canary-seed", "7")
	if code != exitPass {
		t.Fatalf("replay: exit %d\n%s\n%s", code, out2, err2)
	}
	a, b := readJudgeResults(t, first), readJudgeResults(t, second)
	if a.Judge.Calls != 10 || b.Judge.Calls != 0 || b.Judge.Cached != 10 || a.Judge.Tokens != b.Judge.CachedTokens {
		t.Errorf("usage: first %+v, replay %+v", a.Judge, b.Judge)
	}
	a.Judge, b.Judge = nil, nil
	if x, y := mustMarshal(t, a), mustMarshal(t, b); !bytes.Equal(x, y) {
		t.Errorf("the replay differs from the recorded run:\n%s\n%s", x, y)
	}

	// compare reads model-graded results like any others.
	code, out3, err3 := runCLI(t, judgeEnv(), "compare", first, second, "--format", "json")
	var cmpRep struct {
		Matched int               `json:"matched"`
		Flipped []json.RawMessage `json:"flipped"`
	}
	if code != exitPass || json.Unmarshal([]byte(out3), &cmpRep) != nil || cmpRep.Matched != 8 || len(cmpRep.Flipped) != 0 {
		t.Errorf("compare: exit %d %+v\n%s%s", code, cmpRep, out3, err3)
	}

	for name, text := range map[string]string{"stdout": out1 + out2, "stderr": err1 + err2} {
		if strings.Contains(text, "TOPSECRET") {
			t.Errorf("%s shows the key", name)
		}
	}
	filepath.WalkDir(filepath.Dir(cache), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(p); bytes.Contains(b, []byte("TOPSECRET")) {
				t.Errorf("%s holds the key", p)
			}
		}
		return err
	})
	for _, f := range []string{first, second} {
		if b, _ := os.ReadFile(f); bytes.Contains(b, []byte("TOPSECRET")) {
			t.Errorf("%s holds the key", f)
		}
	}

	t.Run("a miss without a key is exit 3 naming the cases", func(t *testing.T) {
		code, _, errs := runCLI(t, judgeEnv(), "run", manifestPath, "--judge-cache", t.TempDir())
		if code != exitInternal || !strings.Contains(errs, "OPENAI_API_KEY is not set") || !strings.Contains(errs, "refund-window") {
			t.Errorf("exit %d\n%s", code, errs)
		}
	})

	t.Run("a refused key is exit 3 and never shown", func(t *testing.T) {
		live := newFakeModel(t)
		env := judgeEnv("OPENAI_API_KEY", "sk-wrong-key-TOPSECRET-zz", "OPENAI_BASE_URL", live.srv.URL+judgePrefix)
		code, out, errs := runCLI(t, env, "run", manifestPath)
		if code != exitInternal || !strings.Contains(errs, "HTTP 401") {
			t.Errorf("exit %d\n%s", code, errs)
		}
		if strings.Contains(out+errs, "TOPSECRET") {
			t.Errorf("the refused key shows:\n%s%s", out, errs)
		}
	})

	t.Run("over budget, nothing is sent and the gate holds", func(t *testing.T) {
		live := newFakeModel(t)
		m := rewrite(t, manifestPath, "max_calls: 50", "max_calls: 3")
		resultsPath := filepath.Join(t.TempDir(), "r.json")
		env := judgeEnv("OPENAI_API_KEY", judgeKey, "OPENAI_BASE_URL", live.srv.URL+judgePrefix)
		code, out, errs := runCLI(t, env, "run", m, "--results", resultsPath)
		if code != exitHold || live.requests.Load() != 0 {
			t.Fatalf("exit %d, %d requests\n%s\n%s", code, live.requests.Load(), out, errs)
		}
		res := readJudgeResults(t, resultsPath)
		if res.Reasons[0].Code != results.ReasonJudgeBudgetExceeded || res.Judge.NotSent != 10 || res.Judge.Needed != 10 {
			t.Errorf("reasons %+v judge %+v", res.Reasons, res.Judge)
		}
	})

	t.Run("a bare alias holds as grader_lint", func(t *testing.T) {
		live := newFakeModel(t)
		m := rewrite(t, manifestPath, "model: gpt-4o-mini-2024-07-18", "model: gpt-4o")
		resultsPath := filepath.Join(t.TempDir(), "r.json")
		env := judgeEnv("OPENAI_API_KEY", judgeKey, "OPENAI_BASE_URL", live.srv.URL+judgePrefix)
		code, out, errs := runCLI(t, env, "run", m, "--results", resultsPath)
		if code != exitHold {
			t.Fatalf("exit %d\n%s\n%s", code, out, errs)
		}
		res := readJudgeResults(t, resultsPath)
		if res.Reasons[0].Code != results.ReasonGraderLint || res.Findings[0].Code != "model_not_pinned" || res.Findings[0].Line == 0 {
			t.Errorf("reasons %+v findings %+v", res.Reasons, res.Findings)
		}
		code, out, _ = runCLI(t, env, "validate", m)
		if code != exitHold || !strings.Contains(out, "model_not_pinned") {
			t.Errorf("validate: exit %d\n%s", code, out)
		}
	})

	t.Run("mutation testing says it does not apply", func(t *testing.T) {
		code, _, errs := runCLI(t, judgeEnv(), "mutate", manifestPath)
		if code != exitInput || !strings.Contains(errs, "mutation testing") || !strings.Contains(errs, "does not apply to a model grader") {
			t.Errorf("exit %d\n%s", code, errs)
		}
		m := rewrite(t, manifestPath, "gate:\n", "gate:\n  min_mutation_score: 0.9\n")
		code, _, errs = runCLI(t, judgeEnv(), "run", m)
		if code != exitInput || !strings.Contains(errs, "gate.min_mutation_score") {
			t.Errorf("exit %d\n%s", code, errs)
		}
	})

	t.Run("shadow between two prompts lists the changed cases", func(t *testing.T) {
		live := newFakeModel(t)
		// The base asks without the reference, so the fake judge fails
		// every answer.
		base := rewrite(t, manifestPath, `\nReference: {{item.reference}}`, "")
		env := judgeEnv("OPENAI_API_KEY", judgeKey, "OPENAI_BASE_URL", live.srv.URL+judgePrefix)
		code, out, errs := runCLI(t, env, "shadow", manifestPath, "--base", base, "--format", "json")
		if code != exitHold {
			t.Fatalf("exit %d\n%s\n%s", code, out, errs)
		}
		var rep struct {
			Base, Head struct{ SHA256 string }
			Changed    []struct {
				CaseID string `json:"case_id"`
			}
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		if len(rep.Changed) != 5 || rep.Base.SHA256 == rep.Head.SHA256 {
			t.Errorf("shadow = %+v", rep)
		}
	})
}

// rewrite writes a copy of the manifest beside it with one edit.
func rewrite(t *testing.T, manifestPath, old, new string) string {
	t.Helper()
	b, err := os.ReadFile(manifestPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(old)) {
		t.Fatalf("%s has no %q", manifestPath, old)
	}
	f, err := os.CreateTemp(filepath.Dir(manifestPath), "edited-*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f.Write(bytes.Replace(b, []byte(old), []byte(new), 1))
	f.Close()
	return f.Name()
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
