package main

import (
	"crypto/sha256"
	"encoding/hex"
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

	"github.com/gradegate/gradegate/gate/judge/judgetest"
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

// localMulti is a multi grader written in the manifest alone, as real
// teams publish them: a cosine text_similarity (embeddings asked by the
// gate) and a string_check, no python sub-grader.
const localMulti = `version: 1
name: local-multi
embedding_model: text-embedding-3-small
dataset:
  path: cases.jsonl
  sha256: "%s"
grader:
  type: multi
  pass_threshold: 0.9
  range: [0, 1]
  calculate_output: "0.5 * similar + 0.5 * mentions"
  graders:
    similar:
      type: text_similarity
      input: "{{sample.output_text}}"
      reference: "{{item.reference_answer}}"
      evaluation_metric: cosine
      pass_threshold: 0.8
    mentions:
      type: string_check
      input: "{{sample.output_text}}"
      reference: "{{item.keyword}}"
      operation: ilike
canaries:
  - {name: same, sample: {output_text: "Mars is red."}, item: {reference_answer: "Mars is red.", keyword: "Mars"}, expect: 1.0, tolerance: 0.001}
  - {name: other, sample: {output_text: "Venus"}, item: {reference_answer: "Mars is red.", keyword: "Mars"}, expect: 0.2, tolerance: 0.2}
gate:
  min_pass_rate: 0.6
  calibration: {max_false_pass: 0}
`

const localCases = `{"item": {"case_id": "a", "slice": "s", "human_score": 1, "reference_answer": "Mars is red.", "keyword": "Mars"}, "sample": {"output_text": "Mars is red."}}
{"item": {"case_id": "b", "slice": "s", "human_score": 0, "reference_answer": "Mars is red.", "keyword": "Mars"}, "sample": {"output_text": "Venus is hot."}}
{"item": {"case_id": "c", "slice": "s", "human_score": 1, "reference_answer": "Water boils at 100 C.", "keyword": "boils"}, "sample": {"output_text": "water boils at 100 c"}}
`

// TestLocalMulti: a multi grader without a python sub-grader is gated
// through its whole output (canaries, calibration, determinism); its
// cosine embeddings are recorded in the judge cache and replay offline.
func TestLocalMulti(t *testing.T) {
	fake := judgetest.New(t, func(string) string { return "" })
	dir := t.TempDir()
	sum := sha256.Sum256([]byte(localCases))
	if err := os.WriteFile(filepath.Join(dir, "cases.jsonl"), []byte(localCases), 0o644); err != nil {
		t.Fatal(err)
	}
	m := filepath.Join(dir, "gradegate.yaml")
	if err := os.WriteFile(m, []byte(fmt.Sprintf(localMulti, hex.EncodeToString(sum[:]))), 0o644); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(t.TempDir(), "cache")
	first := filepath.Join(dir, "first.json")
	code, out, errs := runCLI(t, judgeEnv("OPENAI_API_KEY", judgetest.Key, "OPENAI_BASE_URL", fake.URL()), "run", m, "--judge-cache", cache, "--results", first, "--canary-seed", "3")
	if code != exitPass {
		t.Fatalf("first run: exit %d\n%s\n%s", code, out, errs)
	}
	if fake.Requests() == 0 || fake.BadAuth() != 0 {
		t.Errorf("%d requests, %d without the key", fake.Requests(), fake.BadAuth())
	}
	fake.Close()
	second := filepath.Join(dir, "second.json")
	code, out, errs = runCLI(t, judgeEnv(), "run", m, "--judge-cache", cache, "--judge-cache-mode", "read", "--results", second, "--canary-seed", "3")
	if code != exitPass {
		t.Fatalf("replay: exit %d\n%s\n%s", code, out, errs)
	}
	a, b := readJudgeResults(t, first), readJudgeResults(t, second)
	for i := range a.Cases {
		ca, cb := a.Cases[i], b.Cases[i]
		if ca.Status != cb.Status || ca.Score == nil || cb.Score == nil || *ca.Score != *cb.Score || len(cb.ModelCalls) != 1 || !cb.ModelCalls[0].Cached {
			t.Errorf("%s: %s %v, replayed %s %v %+v", ca.CaseID, ca.Status, ca.Score, cb.Status, cb.Score, cb.ModelCalls)
		}
		if _, ok := ca.Scores["similar"]; !ok {
			t.Errorf("%s: scores %v lack the cosine sub-grader", ca.CaseID, ca.Scores)
		}
	}
	if b.Determinism == nil || len(b.Canaries) < 2 {
		t.Errorf("determinism %+v, canaries %d", b.Determinism, len(b.Canaries))
	}
	if code, _, errs := runCLI(t, judgeEnv(), "mutate", m); code != exitInput || !strings.Contains(errs, "without a python sub-grader") {
		t.Errorf("mutate: exit %d\n%s", code, errs)
	}
}
