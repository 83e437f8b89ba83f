package main

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/manifest/input"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gradegate/gradegate/manifest"
)

// fakeHosted is OpenAI's grader validate and run endpoints, mounted under a
// path prefix so an absolute-URL bug fails. It answers each canary with the
// canary's own expectation, except the rewards in flip.
type fakeHosted struct {
	t        *testing.T
	canaries []manifest.Canary
	flip     map[string]float64 // canary name -> reward to answer instead
	status   int                // when not 0, every request gets this status
	mu       sync.Mutex
	sources  []string          // grader sources received
	graders  []json.RawMessage // grader objects received
	auth     []string
}

func (f *fakeHosted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	if f.status != 0 {
		w.WriteHeader(f.status)
		w.Write([]byte(`{"error": {"message": "denied", "type": "invalid_request_error"}}`))
		return
	}
	var body struct {
		Grader      json.RawMessage `json:"grader"`
		ModelSample string          `json:"model_sample"`
		Item        json.RawMessage `json:"item"`
	}
	var grader struct {
		Source string `json:"source"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || json.Unmarshal(body.Grader, &grader) != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	f.sources = append(f.sources, grader.Source)
	f.graders = append(f.graders, body.Grader)
	switch r.URL.Path {
	case "/prefix/v1/fine_tuning/alpha/graders/validate":
		json.NewEncoder(w).Encode(map[string]any{"grader": map[string]any{"type": "python"}})
	case "/prefix/v1/fine_tuning/alpha/graders/run":
		c, ok := f.canary(body.ModelSample, body.Item)
		if !ok {
			http.Error(w, "unknown canary", http.StatusBadRequest)
			return
		}
		reward, raised := 0.0, c.ExpectError
		if c.Expect != nil {
			reward = *c.Expect
		}
		if v, ok := f.flip[c.Name]; ok {
			reward, raised = v, false
		}
		json.NewEncoder(w).Encode(map[string]any{
			"reward": reward,
			"metadata": map[string]any{"name": "g", "type": "python", "errors": map[string]any{
				"python_grader_runtime_error": raised, "python_grader_runtime_error_details": "KeyError",
			}},
		})
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeHosted) canary(modelSample string, item json.RawMessage) (manifest.Canary, bool) {
	for _, c := range f.canaries {
		var s struct {
			OutputText *string `json:"output_text"`
		}
		json.Unmarshal(c.Sample, &s)
		text := string(c.Sample)
		if s.OutputText != nil {
			text = *s.OutputText
		}
		var a, b any
		json.Unmarshal(c.Item, &a)
		json.Unmarshal(item, &b)
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if (text == modelSample || compactJSON(text) == compactJSON(modelSample)) && bytes.Equal(ja, jb) {
			return c, true
		}
	}
	return manifest.Canary{}, false
}

func compactJSON(s string) string {
	var b bytes.Buffer
	if json.Compact(&b, []byte(s)) != nil {
		return s
	}
	return b.String()
}

// TestCanaryHosted runs `gradegate canary --hosted` against the fake: the
// pinned source bytes are sent, parity lands in the results, a disagreement
// holds naming the canary, a refused key is a tool failure, and the key is
// never printed.
func TestCanaryHosted(t *testing.T) {
	t.Parallel()
	const key = "sk-test-never-print-me"
	manifestPath := filepath.Join("..", "..", "testdata", "examples", "order-summary", "gradegate.yaml")
	m, err := manifest.Load(input.Host{}, filepath.ToSlash(manifestPath))
	if err != nil {
		t.Fatal(err)
	}
	source, err := os.ReadFile(filepath.Join(filepath.Dir(manifestPath), "grader.py"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		flip     map[string]float64
		status   int
		wantCode int
		wantOut  string
	}{
		{name: "every canary agrees", wantCode: exitPass, wantOut: `"status": "pass"`},
		{name: "hosted scores the one-cent boolean as a pass", flip: map[string]float64{"boolean-total-one-cent": 1}, wantCode: exitHold, wantOut: "boolean-total-one-cent"},
		{name: "the key is refused", status: http.StatusUnauthorized, wantCode: exitInternal},
		{name: "the hosted graders are gone", status: http.StatusNotFound, wantCode: exitInternal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := &fakeHosted{t: t, canaries: m.Canaries, flip: tt.flip, status: tt.status}
			srv := httptest.NewServer(fake)
			defer srv.Close()
			resultsPath := filepath.Join(t.TempDir(), "results.json")
			env := map[string]string{"OPENAI_API_KEY": key, "NO_COLOR": "1"}
			var stdout, stderr bytes.Buffer
			o := execute(context.Background(), []string{"canary", manifestPath, "--hosted", "--hosted-url", srv.URL + "/prefix", "--results", resultsPath, "--format", "json"},
				func(k string) string { return env[k] }, &stdout, &stderr)
			if o.code != tt.wantCode {
				t.Fatalf("exit %d, want %d\nstderr:\n%s", o.code, tt.wantCode, stderr.String())
			}
			if strings.Contains(stdout.String()+stderr.String(), key) {
				t.Error("the API key was printed")
			}
			for _, a := range fake.auth {
				if a != "Bearer "+key {
					t.Errorf("Authorization %q, want the bearer key", a)
				}
			}
			if tt.status != 0 {
				return
			}
			for _, s := range fake.sources {
				if s != string(source) {
					t.Fatal("the hosted grader got other bytes than the pinned source")
				}
			}
			if !strings.Contains(stdout.String(), tt.wantOut) {
				t.Errorf("stdout lacks %q", tt.wantOut)
			}
			res := readResultsFile(t, resultsPath)
			if res.Hosted == nil || len(res.Hosted.Rows) != len(m.Canaries) {
				t.Fatalf("results carry no hosted parity for every canary: %+v", res.Hosted)
			}
			for _, row := range res.Hosted.Rows {
				// no-output-text has no output_text string: the hosted grader
				// cannot be given its sample, so it is not sent at all.
				if comparable := row.Name != "no-output-text"; row.Comparable != comparable || (len(row.Attempts) > 0) != comparable {
					t.Errorf("%s: comparable %v with %d attempts", row.Name, row.Comparable, len(row.Attempts))
				}
			}
			held := false
			for _, r := range res.Reasons {
				held = held || (r.Code == results.ReasonCanaryFailed && strings.Contains(r.Message, "hosted parity"))
			}
			if held != (tt.wantCode == exitHold) {
				t.Errorf("hosted parity reason present = %v, want %v (reasons %+v)", held, tt.wantCode == exitHold, res.Reasons)
			}
		})
	}
}

// TestCanaryHostedMulti sends a multi grader to the fake in OpenAI's own
// shape: the python part with its pinned bytes, the string_check with its
// keys, and calculate_output; parity is judged on the combined reward.
func TestCanaryHostedMulti(t *testing.T) {
	manifestPath := filepath.Join("..", "..", "testdata", "examples", "multi", "gradegate.yaml")
	m, err := manifest.Load(input.Host{}, filepath.ToSlash(manifestPath))
	if err != nil {
		t.Fatal(err)
	}
	source, err := os.ReadFile(filepath.Join(filepath.Dir(manifestPath), "grader.py"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		flip     map[string]float64
		wantCode int
	}{
		{name: "every canary agrees", wantCode: exitPass},
		{name: "hosted scores the empty answer", flip: map[string]float64{"empty": 0.15}, wantCode: exitHold},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := &fakeHosted{t: t, canaries: m.Canaries, flip: tt.flip}
			srv := httptest.NewServer(fake)
			defer srv.Close()
			env := map[string]string{"OPENAI_API_KEY": "sk-test", "NO_COLOR": "1"}
			var stdout, stderr bytes.Buffer
			o := execute(context.Background(), []string{"canary", manifestPath, "--hosted", "--hosted-url", srv.URL + "/prefix", "--format", "json"},
				func(k string) string { return env[k] }, &stdout, &stderr)
			if o.code != tt.wantCode {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", o.code, tt.wantCode, stdout.String(), stderr.String())
			}
			want := map[string]any{
				"type": "multi", "name": "similarity_and_keyword", "calculate_output": "0.85 * similarity + 0.15 * mentions",
				"graders": map[string]any{
					"similarity": map[string]any{"type": "python", "name": "similarity", "source": string(source)},
					"mentions": map[string]any{"type": "string_check", "name": "mentions", "input": "{{sample.output_text}}",
						"reference": "{{item.keyword}}", "operation": "ilike"},
				},
			}
			if len(fake.graders) != 1+len(m.Canaries) {
				t.Fatalf("%d requests, want validate and one run per canary", len(fake.graders))
			}
			for _, raw := range fake.graders {
				var got map[string]any
				if err := json.Unmarshal(raw, &got); err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(want, got); d != "" {
					t.Fatalf("grader sent (-want +got):\n%s", d)
				}
			}
			if tt.wantCode == exitHold && !strings.Contains(stdout.String(), `hosted parity`) {
				t.Errorf("the hold does not name hosted parity:\n%s", stdout.String())
			}
		})
	}
}
