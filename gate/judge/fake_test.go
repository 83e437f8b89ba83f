package judge_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/gradegate/gradegate/gate"
	"github.com/gradegate/gradegate/gate/judge"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/dataset"
)

// prefix is where the fake API is mounted, so a client that drops the base
// URL's path (or builds absolute URLs) fails.
const prefix = "/proxy/openai/v1"

const testKey = "sk-test-0123456789abcdefSECRET"

// reply is what the fake answers to one prompt: the model's text, or an
// HTTP error.
type reply struct {
	text   string
	status int               // 0: 200
	header map[string]string // on an error
	body   string            // error body
}

// fakeAPI is an httptest fake of OpenAI's chat completions and responses
// endpoints. answer decides each reply from the rendered user prompt.
type fakeAPI struct {
	srv      *httptest.Server
	answer   func(prompt string) reply
	requests atomic.Int64
	mu       sync.Mutex
	paths    map[string]int
	badAuth  int
}

func newFake(t testing.TB, answer func(prompt string) reply) *fakeAPI {
	t.Helper()
	f := &fakeAPI{answer: answer, paths: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+prefix+"/chat/completions", f.handle)
	mux.HandleFunc("POST "+prefix+"/responses", f.handle)
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAPI) url() string { return f.srv.URL + prefix }

func (f *fakeAPI) handle(w http.ResponseWriter, r *http.Request) {
	f.requests.Add(1)
	f.mu.Lock()
	f.paths[strings.TrimPrefix(r.URL.Path, prefix)]++
	if r.Header.Get("Authorization") != "Bearer "+testKey {
		f.badAuth++
	}
	f.mu.Unlock()
	var body struct {
		Model    string `json:"model"`
		Messages []struct {
			Role, Content string
		} `json:"messages"`
		Input []struct {
			Role, Content string
		} `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	msgs := body.Messages
	if strings.HasSuffix(r.URL.Path, "/responses") {
		msgs = body.Input
	}
	var prompt strings.Builder
	for _, m := range msgs {
		prompt.WriteString(m.Content + "\n")
	}
	rep := f.answer(prompt.String())
	if rep.status != 0 && rep.status != http.StatusOK {
		for k, v := range rep.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(rep.status)
		fmt.Fprint(w, rep.body)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	text, _ := json.Marshal(rep.text)
	if strings.HasSuffix(r.URL.Path, "/responses") {
		fmt.Fprintf(w, `{"id":"resp_1","object":"response","model":%q,"output":[{"type":"reasoning","summary":[]},{"type":"message","role":"assistant","content":[{"type":"output_text","text":%s,"annotations":[]}]}],"usage":{"input_tokens":40,"output_tokens":7,"total_tokens":47}}`, body.Model, text)
		return
	}
	fmt.Fprintf(w, `{"id":"chatcmpl-1","object":"chat.completion","model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":%s,"refusal":null},"finish_reason":"stop"}],"usage":{"prompt_tokens":40,"completion_tokens":7,"total_tokens":47}}`, body.Model, text)
}

// result is the structured output OpenAI's score_model asks for.
func result(score any) reply {
	b, _ := json.Marshal(map[string]any{"steps": []any{}, "result": score})
	return reply{text: string(b)}
}

// agree passes what is GOOD and fails everything else, as the labels do.
func agree(prompt string) reply {
	if strings.Contains(prompt, "GOOD") {
		return result(1)
	}
	return result(0)
}

// lenient also passes the SUBTLE wrong answers the labels fail.
func lenient(prompt string) reply {
	if strings.Contains(prompt, "GOOD") || strings.Contains(prompt, "SUBTLE") {
		return result(1)
	}
	return result(0)
}

const suiteYAML = `version: 1
name: judge-suite
dataset:
  path: cases.jsonl
  sha256: "%s"
grader:
  type: score_model
  model: gpt-4o-mini-2024-07-18
  input:
    - role: system
      content: 'Grade the answer against the reference. Reply {"steps": [...], "result": 0 or 1}.'
    - role: user
      content: "Question: {{item.question}}\nReference: {{ item.reference }}\nAnswer: {{sample.output_text}}"
  range: [0, 1]
  pass_threshold: 1
  sampling_params: {temperature: 0, seed: 7}
%s
canaries:
  - name: good-answer
    sample: {output_text: "GOOD: refunds take 5 days"}
    item: {question: "How long do refunds take?", reference: "5 days"}
    expect: 1
  - name: wrong-answer
    sample: {output_text: "BAD: refunds take a year"}
    item: {question: "How long do refunds take?", reference: "5 days"}
    expect: 0
  - name: fixture-without-reference
    sample: {output_text: "GOOD: refunds take 5 days"}
    item: {question: "How long do refunds take?"}
    expect_error: true
gate:
  min_pass_rate: 0.5
  slices:
    refund: {mandatory: true, min_pass_rate: 0.5}
  calibration:
    max_false_pass: 0
  # These tests count the judge's calls for the cases and canaries;
  # derived canaries have their own tests (gate, cmd/gradegate).
  metamorphic: {enabled: false}
`

const suiteCases = `{"item": {"case_id": "c1", "slice": "refund", "human_score": 1, "question": "Refund time?", "reference": "5 days"}, "sample": {"output_text": "GOOD: 5 days"}}
{"item": {"case_id": "c2", "slice": "refund", "human_score": 0, "question": "Refund time?", "reference": "5 days"}, "sample": {"output_text": "BAD: never"}}
{"item": {"case_id": "c3", "slice": "refund", "human_score": 0, "question": "Refund time?", "reference": "5 days"}, "sample": {"output_text": "SUBTLE: 5 weeks"}}
{"item": {"case_id": "c4", "slice": "refund", "human_score": 1, "question": "Refund time, in days?", "reference": "5 days"}, "sample": {"output_text": "GOOD: five days"}}
`

// suite is a loaded manifest and dataset; extra is YAML added to the grader.
func suite(t testing.TB, extra string) (*manifest.Manifest, fstest.MapFS, *dataset.Set) {
	t.Helper()
	sum := sha256.Sum256([]byte(suiteCases))
	fsys := fstest.MapFS{
		"s/cases.jsonl":    {Data: []byte(suiteCases)},
		"s/gradegate.yaml": {Data: fmt.Appendf(nil, suiteYAML, hex.EncodeToString(sum[:]), extra)},
	}
	m, err := manifest.Load(fsys, "s/gradegate.yaml")
	if err != nil {
		t.Fatalf("manifest: %v", err)
	}
	set, err := dataset.Load(fsys, m)
	if err != nil {
		t.Fatalf("dataset: %v", err)
	}
	return m, fsys, set
}

// noSleep records the backoff delays instead of waiting them out.
type noSleep struct {
	mu     sync.Mutex
	delays []time.Duration
}

func (n *noSleep) sleep(_ context.Context, d time.Duration) error {
	n.mu.Lock()
	n.delays = append(n.delays, d)
	n.mu.Unlock()
	return nil
}

// runGate runs the gate with a judge for m.
func runGate(t testing.TB, m *manifest.Manifest, fsys fstest.MapFS, set *dataset.Set, cfg judge.Config) (*results.Results, *judge.Judge, error) {
	t.Helper()
	cfg.Grader = m.Grader
	if cfg.Sleep == nil {
		cfg.Sleep = (&noSleep{}).sleep
	}
	j, err := judge.New(cfg)
	if err != nil {
		t.Fatalf("judge.New: %v", err)
	}
	// A fixed canary seed: a replay that is to match the recorded run byte
	// for byte places its blind canaries as that run did (--canary-seed).
	res, err := gate.Run(context.Background(), gate.Inputs{Manifest: m, FS: fsys, Dataset: set}, j, gate.Options{Version: "test", CanarySeed: 42, JudgeUsage: j.Usage})
	return res, j, err
}
