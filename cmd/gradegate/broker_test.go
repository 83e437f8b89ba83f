package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
)

const brokerExample = "../../testdata/examples/mka1-judge"

// fakeResponses is OpenAI's responses endpoint with a deterministic judge
// for the MKA1 example's prompt: "correct" when the prediction contains
// the reference, mounted under a path prefix.
type fakeResponses struct {
	srv      *httptest.Server
	requests atomic.Int64
	badAuth  atomic.Int64
}

var judgePromptRE = regexp.MustCompile(`Reference: (.*)\nPrediction: (.*)\n`)

func newFakeResponses(t *testing.T) *fakeResponses {
	t.Helper()
	f := &fakeResponses{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+judgePrefix+"/responses", func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
		if r.Header.Get("Authorization") != "Bearer "+judgeKey {
			f.badAuth.Add(1)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var body struct {
			Model  string `json:"model"`
			Input  string `json:"input"`
			Stream *bool  `json:"stream"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Stream == nil || *body.Stream {
			http.Error(w, `{"error":{"message":"want a string input and stream false"}}`, http.StatusBadRequest)
			return
		}
		m := judgePromptRE.FindStringSubmatch(body.Input)
		verdict, why := "incorrect", "the prediction does not state the reference"
		if m != nil && m[1] != "" && strings.Contains(strings.ToLower(m[2]), strings.ToLower(m[1])) {
			verdict, why = "correct", "the prediction states the reference"
		}
		text, _ := json.Marshal(map[string]string{"verdict": verdict, "rationale": why})
		out, _ := json.Marshal(string(text))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"resp_fake","object":"response","model":%q,"status":"completed","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":%s,"annotations":[]}]}],"usage":{"input_tokens":%d,"output_tokens":12,"total_tokens":%d}}`,
			body.Model, out, 50+len(body.Input)/8, 62+len(body.Input)/8)
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

// TestMKA1JudgeExample replays the shipped ctx example from its committed
// cache with no key and no network; -update records the cache again
// against the fake model.
func TestMKA1JudgeExample(t *testing.T) {
	manifestPath := filepath.Join(brokerExample, "gradegate.yaml")
	cache := filepath.Join(brokerExample, "judge-cache")
	if *update {
		fake := newFakeResponses(t)
		if err := os.RemoveAll(cache); err != nil {
			t.Fatal(err)
		}
		code, out, errs := runCLI(t, judgeEnv("OPENAI_API_KEY", judgeKey, "OPENAI_BASE_URL", fake.srv.URL+judgePrefix),
			"run", manifestPath, "--judge-cache", cache, "--judge-cache-mode", "write", "--python", "/usr/bin/python3")
		if code != exitPass {
			t.Fatalf("recording: exit %d\n%s\n%s", code, out, errs)
		}
	}
	resultsPath := filepath.Join(t.TempDir(), "r.json")
	code, out, errs := runCLI(t, judgeEnv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1"), "run", manifestPath,
		"--judge-cache", cache, "--judge-cache-mode", "read", "--results", resultsPath, "--python", "/usr/bin/python3")
	if code != exitPass {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	res := readJudgeResults(t, resultsPath)
	if u := res.Judge; u == nil || u.Calls != 0 || u.Cached == 0 || u.CachedTokens.Input == 0 {
		t.Errorf("judge = %+v, want replayed calls and none made", u)
	}
	for _, c := range res.Cases {
		if len(c.ModelCalls) != 1 || !c.ModelCalls[0].Cached || c.ModelCalls[0].Model != "gpt-4.1-mini-2025-04-14" {
			t.Errorf("%s: model calls %+v, want one replayed call", c.CaseID, c.ModelCalls)
		}
	}
	if !strings.Contains(out, "judge: python gpt-4.1-mini-2025-04-14 (ctx): 0 calls") {
		t.Errorf("stdout lacks the judge line:\n%s", out)
	}
}

// TestBrokeredRun: a ctx grader run end to end against the fake, then
// replayed with the fake stopped and no key, with the same verdict and
// scores; the key never shows; a miss without a key fails the run (exit
// 3); mutation testing replays, with no network.
func TestBrokeredRun(t *testing.T) {
	fake := newFakeResponses(t)
	dir := t.TempDir()
	for _, name := range []string{"gradegate.yaml", "grader.py", "cases.jsonl"} {
		b, err := os.ReadFile(filepath.Join(brokerExample, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m := filepath.Join(dir, "gradegate.yaml")
	cache := filepath.Join(t.TempDir(), "cache")
	withKey := judgeEnv("OPENAI_API_KEY", judgeKey, "OPENAI_BASE_URL", fake.srv.URL+judgePrefix)
	first := filepath.Join(dir, "first.json")
	code, out1, err1 := runCLI(t, withKey, "run", m, "--judge-cache", cache, "--results", first, "--canary-seed", "7", "--python", "/usr/bin/python3")
	if code != exitPass {
		t.Fatalf("first run: exit %d\n%s\n%s", code, out1, err1)
	}
	if fake.requests.Load() == 0 || fake.badAuth.Load() != 0 {
		t.Errorf("%d requests, %d without the key", fake.requests.Load(), fake.badAuth.Load())
	}
	raw, _ := os.ReadFile(first)
	for what, s := range map[string]string{"stdout": out1, "stderr": err1, "results": string(raw)} {
		if strings.Contains(s, judgeKey) {
			t.Errorf("the key shows in %s", what)
		}
	}
	fake.srv.Close()
	sent := fake.requests.Load()

	second := filepath.Join(dir, "second.json")
	code, out2, err2 := runCLI(t, judgeEnv(), "run", m, "--judge-cache", cache, "--judge-cache-mode", "read", "--results", second, "--canary-seed", "7", "--python", "/usr/bin/python3")
	if code != exitPass {
		t.Fatalf("replay: exit %d\n%s\n%s", code, out2, err2)
	}
	a, b := readJudgeResults(t, first), readJudgeResults(t, second)
	if len(a.Cases) != len(b.Cases) {
		t.Fatalf("%d cases, then %d", len(a.Cases), len(b.Cases))
	}
	for i := range a.Cases {
		if a.Cases[i].Status != b.Cases[i].Status || string(a.Cases[i].Judge) != string(b.Cases[i].Judge) {
			t.Errorf("%s: %s %s, replayed %s %s", a.Cases[i].CaseID, a.Cases[i].Status, a.Cases[i].Judge, b.Cases[i].Status, b.Cases[i].Judge)
		}
	}
	if b.Judge == nil || b.Judge.Calls != 0 || b.Judge.Cached != a.Judge.Calls+a.Judge.Cached {
		t.Errorf("replay judge %+v, recorded %+v", b.Judge, a.Judge)
	}

	code, _, errs := runCLI(t, judgeEnv(), "run", m, "--python", "/usr/bin/python3")
	if code != exitInternal || !strings.Contains(errs, "OPENAI_API_KEY") {
		t.Errorf("a miss without a key: exit %d\n%s", code, errs)
	}

	code, out, errs := runCLI(t, judgeEnv("OPENAI_API_KEY", judgeKey, "OPENAI_BASE_URL", fake.srv.URL+judgePrefix),
		"mutate", m, "--judge-cache", cache, "--judge-cache-mode", "read", "--python", "/usr/bin/python3", "--format", "json")
	if code != exitPass && code != exitHold {
		t.Fatalf("mutate: exit %d\n%s\n%s", code, out, errs)
	}
	var rep struct {
		Killed, Survived int
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Killed == 0 {
		t.Errorf("mutate: %v %+v\n%s", err, rep, out)
	}
	if fake.requests.Load() != sent {
		t.Errorf("mutation testing sent %d requests; it must only replay", fake.requests.Load()-sent)
	}
}
