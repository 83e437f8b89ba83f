package judge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gradegate/gradegate/gate"
	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/judge"
	"github.com/gradegate/gradegate/gate/results"
)

func reasonCodes(res *results.Results) []string {
	var out []string
	for _, r := range res.Reasons {
		out = append(out, r.Code)
	}
	return out
}

func caseClasses(res *results.Results) map[string]string {
	out := map[string]string{}
	for _, c := range res.Cases {
		out[c.CaseID] = string(c.Class) + "/" + c.Status
	}
	return out
}

func TestGateWithJudge(t *testing.T) {
	tests := []struct {
		name        string
		answer      func(string) reply
		verdict     string
		reasons     []string
		classes     map[string]string
		invalid     int
		falsePasses int
		canaryFails []string
	}{
		{
			name:    "a judge that agrees with the labels passes",
			answer:  agree,
			verdict: results.VerdictPass,
			classes: map[string]string{"c1": "ok/pass", "c2": "ok/fail", "c3": "ok/fail", "c4": "ok/pass"},
		},
		{
			name:        "a judge that passes what humans fail is held by calibration",
			answer:      lenient,
			verdict:     results.VerdictHold,
			reasons:     []string{results.ReasonFalsePass},
			classes:     map[string]string{"c1": "ok/pass", "c2": "ok/fail", "c3": "ok/pass", "c4": "ok/pass"},
			falsePasses: 1,
		},
		{
			name:        "a judge that passes everything fails its negative canary",
			answer:      func(string) reply { return result(1) },
			verdict:     results.VerdictHold,
			reasons:     []string{results.ReasonCanaryFailed, results.ReasonFalsePass},
			classes:     map[string]string{"c1": "ok/pass", "c2": "ok/pass", "c3": "ok/pass", "c4": "ok/pass"},
			falsePasses: 2,
			canaryFails: []string{"wrong-answer"},
		},
		{
			name: "garbage replies are invalid returns, counted, never a pass or a fail",
			answer: func(p string) reply {
				switch {
				case strings.Contains(p, "five days"):
					return reply{text: "I would say this deserves full marks."}
				case strings.Contains(p, "never"):
					return result(7) // outside range [0, 1]
				case strings.Contains(p, "5 weeks"):
					return reply{text: `{"result": "0"}`}
				}
				return agree(p)
			},
			verdict: results.VerdictHold,
			// Overall and in the mandatory slice.
			reasons: []string{results.ReasonUnevaluableCases, results.ReasonUnevaluableCases},
			classes: map[string]string{"c1": "ok/pass", "c2": "invalid_return/error", "c3": "invalid_return/error", "c4": "invalid_return/error"},
			invalid: 3,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := newFake(t, tt.answer)
			m, fsys, set := suite(t, "")
			res, j, err := runGate(t, m, fsys, set, judge.Config{BaseURL: fake.url(), APIKey: testKey})
			if err != nil {
				t.Fatalf("gate.Run: %v", err)
			}
			if res.Verdict != tt.verdict || !slices.Equal(reasonCodes(res), tt.reasons) {
				t.Errorf("verdict %s %v, want %s %v", res.Verdict, reasonCodes(res), tt.verdict, tt.reasons)
			}
			var failed []string
			for _, c := range res.Canaries {
				if c.Status != "pass" {
					failed = append(failed, c.Name)
				}
			}
			if !slices.Equal(failed, tt.canaryFails) {
				t.Errorf("failed canaries %v, want %v", failed, tt.canaryFails)
			}
			if got := caseClasses(res); !equalMaps(got, tt.classes) {
				t.Errorf("cases = %v, want %v", got, tt.classes)
			}
			u := j.Usage()
			if u.InvalidReplies != tt.invalid || len(u.InvalidIDs) != tt.invalid {
				t.Errorf("invalid replies = %d %v, want %d", u.InvalidReplies, u.InvalidIDs, tt.invalid)
			}
			// Canaries and cases, less the canary whose template fails.
			if u.Calls != 6 || fake.requests.Load() != 6 || u.Tokens.Input != 240 || u.Tokens.Output != 42 {
				t.Errorf("calls %d, requests %d, tokens %+v; want 6 calls of 40+7 tokens", u.Calls, fake.requests.Load(), u.Tokens)
			}
			if fake.badAuth != 0 {
				t.Errorf("%d requests without the key", fake.badAuth)
			}
			if sl := res.Slices[0]; sl.FalsePass != tt.falsePasses {
				t.Errorf("false passes = %d, want %d", sl.FalsePass, tt.falsePasses)
			}
			for _, c := range res.Cases {
				if c.Class == grading.ClassInvalidReturn && (c.Score != nil || c.Error == nil || c.Error.Type != judge.ErrInvalidReply) {
					t.Errorf("%s: an invalid reply became score %v error %+v", c.CaseID, c.Score, c.Error)
				}
			}
		})
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// The cache replays a run byte for byte with the fake stopped and no key.
func TestReplayFromCache(t *testing.T) {
	fake := newFake(t, agree)
	dir := t.TempDir()
	m, fsys, set := suite(t, "")
	cache := &judge.Cache{Dir: dir}
	first, _, err := runGate(t, m, fsys, set, judge.Config{BaseURL: fake.url(), APIKey: testKey, Cache: cache, CacheMode: judge.CacheReadWrite})
	if err != nil {
		t.Fatal(err)
	}
	fake.srv.Close()

	second, j, err := runGate(t, m, fsys, set, judge.Config{BaseURL: fake.url(), Cache: cache, CacheMode: judge.CacheRead})
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	if u := j.Usage(); u.Calls != 0 || u.Cached != 6 || u.CachedTokens.Input != 240 {
		t.Errorf("replay usage = %+v, want 0 calls and 6 cached", u)
	}
	strip := func(r *results.Results) []byte {
		c := *r
		c.Judge = nil
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if a, b := strip(first), strip(second); !bytes.Equal(a, b) {
		t.Errorf("replayed results differ:\nfirst  %s\nsecond %s", a, b)
	}

	// A third run, replaying again, is identical to the second in every
	// byte but the wall time.
	third, _, err := runGate(t, m, fsys, set, judge.Config{Cache: cache, CacheMode: judge.CacheReadWrite})
	if err != nil {
		t.Fatal(err)
	}
	second.Judge.WallMS, third.Judge.WallMS = 0, 0
	second.Judge.CacheMode = ""
	third.Judge.CacheMode = ""
	if a, b := mustJSON(t, second), mustJSON(t, third); !bytes.Equal(a, b) {
		t.Errorf("two replays differ:\n%s\n%s", a, b)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A miss with no key is a tool failure naming the case, never a verdict.
func TestMissWithoutKey(t *testing.T) {
	m, fsys, set := suite(t, "")
	_, _, err := runGate(t, m, fsys, set, judge.Config{Cache: &judge.Cache{Dir: t.TempDir()}})
	if err == nil || !strings.Contains(err.Error(), "no OPENAI_API_KEY") {
		t.Fatalf("err = %v, want a miss without a key", err)
	}
	j, err := judge.New(judge.Config{Grader: m.Grader, Cache: &judge.Cache{Dir: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	var tasks []grading.Task
	for _, c := range set.Cases {
		tasks = append(tasks, grading.Task{ID: c.ID, Sample: c.Sample, Item: c.Item})
	}
	misses, err := j.Plan(tasks)
	if err != nil || !slices.Equal(misses, []string{"c1", "c2", "c3", "c4"}) {
		t.Errorf("Plan = %v, %v", misses, err)
	}
}

// A run needing more calls than grader.max_calls sends none and holds.
func TestBudget(t *testing.T) {
	fake := newFake(t, agree)
	m, fsys, set := suite(t, "  max_calls: 3")
	j, err := judge.New(judge.Config{Grader: m.Grader, BaseURL: fake.url(), APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	var tasks []grading.Task
	for _, c := range m.Canaries {
		tasks = append(tasks, grading.Task{ID: c.Name, Sample: c.Sample, Item: c.Item})
	}
	for _, c := range set.Cases {
		tasks = append(tasks, grading.Task{ID: c.ID, Sample: c.Sample, Item: c.Item})
	}
	misses, err := j.Plan(tasks)
	if err != nil {
		t.Fatal(err)
	}
	j.Reserve(len(misses))
	res, err := gate.Run(context.Background(), gate.Inputs{Manifest: m, FS: fsys, Dataset: set}, j, gate.Options{JudgeUsage: j.Usage})
	if err != nil {
		t.Fatal(err)
	}
	if fake.requests.Load() != 0 {
		t.Errorf("%d requests sent over budget", fake.requests.Load())
	}
	if res.Verdict != results.VerdictHold || res.Reasons[0].Code != results.ReasonJudgeBudgetExceeded {
		t.Fatalf("verdict %s %v, want a hold for the budget first", res.Verdict, reasonCodes(res))
	}
	if u := res.Judge; u.NotSent != 6 || u.Needed != 6 || u.MaxCalls != 3 || len(u.NotSentIDs) != 6 {
		t.Errorf("usage = %+v", u)
	}
	for _, c := range res.Cases {
		if c.Status != results.StatusError || c.Error.Type != judge.ErrNotSent {
			t.Errorf("%s: %s %+v, want an error not sent", c.CaseID, c.Status, c.Error)
		}
	}

	// Within the budget, everything is sent.
	j2, _ := judge.New(judge.Config{Grader: m.Grader, BaseURL: fake.url(), APIKey: testKey})
	j2.Reserve(3)
	if _, err := j2.Grade(context.Background(), tasks[:3]); err != nil {
		t.Fatal(err)
	}
	if u := j2.Usage(); u.Calls != 2 || u.NotSent != 0 {
		t.Errorf("within budget: %+v", u)
	}
}

func TestRetries(t *testing.T) {
	tests := []struct {
		name     string
		replies  []reply
		requests int
		delays   []time.Duration
		wantErr  string
	}{
		{
			name:     "429 then success, honouring retry-after-ms",
			replies:  []reply{{status: 429, header: map[string]string{"retry-after-ms": "1500"}, body: `{"error":{"message":"slow down"}}`}, result(1)},
			requests: 2,
			delays:   []time.Duration{1500 * time.Millisecond},
		},
		{
			name: "5xx retried twice with exponential backoff, then fails",
			replies: []reply{
				{status: 500, body: "oops"}, {status: 502, body: "oops"}, {status: 503, body: "oops"},
			},
			requests: 3,
			delays:   []time.Duration{500 * time.Millisecond, time.Second},
			wantErr:  "HTTP 503: oops (after 2 retries)",
		},
		{
			name:     "x-should-retry false stops a 500",
			replies:  []reply{{status: 500, header: map[string]string{"x-should-retry": "false"}, body: "no"}},
			requests: 1,
			wantErr:  "HTTP 500",
		},
		{
			name:     "x-should-retry true retries a 400",
			replies:  []reply{{status: 400, header: map[string]string{"x-should-retry": "true"}, body: "x"}, result(1)},
			requests: 2,
			delays:   []time.Duration{500 * time.Millisecond},
		},
		{
			name:     "retry-after in seconds; 408 and 409 are retried",
			replies:  []reply{{status: 408, header: map[string]string{"retry-after": "2"}}, {status: 409}, result(0)},
			requests: 3,
			delays:   []time.Duration{2 * time.Second, time.Second},
		},
		{
			name:     "retry-after over 60 s is ignored for the backoff",
			replies:  []reply{{status: 429, header: map[string]string{"retry-after": "3600"}}, result(0)},
			requests: 2,
			delays:   []time.Duration{500 * time.Millisecond},
		},
		{
			name:     "400 is not retried",
			replies:  []reply{{status: 400, body: `{"error":{"message":"bad request"}}`}},
			requests: 1,
			wantErr:  "HTTP 400: bad request",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var n int
			fake := newFake(t, func(string) reply {
				r := tt.replies[min(n, len(tt.replies)-1)]
				n++
				return r
			})
			m, _, _ := suite(t, "")
			sleeper := &noSleep{}
			j, err := judge.New(judge.Config{
				Grader: m.Grader, BaseURL: fake.url(), APIKey: testKey,
				Sleep: sleeper.sleep, Random: func() float64 { return 0 },
			})
			if err != nil {
				t.Fatal(err)
			}
			c := m.Canaries[0]
			_, err = j.Grade(context.Background(), []grading.Task{{ID: c.Name, Sample: c.Sample, Item: c.Item}})
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("err = %v, want %q", err, tt.wantErr)
			}
			if int(fake.requests.Load()) != tt.requests || !slices.Equal(sleeper.delays, tt.delays) {
				t.Errorf("requests %d delays %v, want %d %v", fake.requests.Load(), sleeper.delays, tt.requests, tt.delays)
			}
		})
	}
}

// The jitter cuts the backoff by up to a quarter, as the SDK does.
func TestBackoffJitter(t *testing.T) {
	fake := newFake(t, func(string) reply { return reply{status: 500} })
	m, _, _ := suite(t, "")
	sleeper := &noSleep{}
	j, _ := judge.New(judge.Config{Grader: m.Grader, BaseURL: fake.url(), APIKey: testKey, Sleep: sleeper.sleep, Random: func() float64 { return 1 }})
	c := m.Canaries[0]
	j.Grade(context.Background(), []grading.Task{{ID: c.Name, Sample: c.Sample, Item: c.Item}})
	if want := []time.Duration{375 * time.Millisecond, 750 * time.Millisecond}; !slices.Equal(sleeper.delays, want) {
		t.Errorf("delays = %v, want %v", sleeper.delays, want)
	}
}

// The key never appears in an error, a result or a cache file, even when
// the API quotes it back.
func TestKeyNeverShown(t *testing.T) {
	dir := t.TempDir()
	quote := func(p string) reply {
		if strings.Contains(p, "five days") {
			return reply{status: 401, body: `{"error":{"message":"Incorrect API key provided: ` + testKey + ` (sk-tes***SECRET)"}}`}
		}
		return reply{text: "key? " + testKey[:6]}
	}
	fake := newFake(t, quote)
	m, fsys, set := suite(t, "")
	res, _, err := runGate(t, m, fsys, set, judge.Config{BaseURL: fake.url(), APIKey: testKey, Cache: &judge.Cache{Dir: dir}, CacheMode: judge.CacheReadWrite})
	if err == nil {
		t.Fatal("a 401 must fail the run")
	}
	if strings.Contains(err.Error(), "SECRET") || strings.Contains(err.Error(), testKey) {
		t.Errorf("the error shows the key: %v", err)
	}
	if !strings.Contains(err.Error(), "HTTP 401") || !strings.Contains(err.Error(), "c4") {
		t.Errorf("err = %v, want the 401 and the case", err)
	}
	if res != nil {
		t.Errorf("results from a failed run: %v", res)
	}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := os.ReadFile(p)
		if bytes.Contains(b, []byte("SECRET")) {
			t.Errorf("%s holds the key", p)
		}
		return nil
	})
}

// The responses endpoint, with a label_model grader.
func TestResponsesLabelModel(t *testing.T) {
	fake := newFake(t, func(p string) reply {
		switch {
		case strings.Contains(p, "GOOD"):
			return reply{text: `{"steps": [], "result": "correct"}`}
		case strings.Contains(p, "SUBTLE"):
			return reply{text: "partially correct"}
		case strings.Contains(p, "never"):
			return reply{text: "Correct"} // not exactly a label
		}
		return reply{text: "incorrect"}
	})
	m, fsys, set := suite(t, "")
	m.Grader.Type = "label_model"
	m.Grader.Judge.Endpoint = "responses"
	m.Grader.Judge.Labels = []string{"correct", "partially correct", "incorrect"}
	m.Grader.Judge.PassingLabels = []string{"correct"}
	m.Grader.Judge.SamplingParams.Seed = nil
	res, j, err := runGate(t, m, fsys, set, judge.Config{BaseURL: fake.url(), APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"c1": "ok/pass", "c2": "invalid_return/error", "c3": "ok/fail", "c4": "ok/pass"}
	if got := caseClasses(res); !equalMaps(got, want) {
		t.Errorf("cases = %v, want %v", got, want)
	}
	if fake.paths["/responses"] != 6 || fake.paths["/chat/completions"] != 0 {
		t.Errorf("paths = %v", fake.paths)
	}
	var info struct{ Label string }
	json.Unmarshal(res.Cases[2].Judge, &info)
	if info.Label != "partially correct" {
		t.Errorf("c3 judge = %s", res.Cases[2].Judge)
	}
	if u := j.Usage(); u.Tokens.Output != 42 {
		t.Errorf("tokens = %+v", u.Tokens)
	}
}

// A cache file that holds another request than its name says fails the
// run rather than grade with a reply to another prompt.
func TestTamperedCache(t *testing.T) {
	fake := newFake(t, agree)
	dir := t.TempDir()
	m, fsys, set := suite(t, "")
	if _, _, err := runGate(t, m, fsys, set, judge.Config{BaseURL: fake.url(), APIKey: testKey, Cache: &judge.Cache{Dir: dir}}); err != nil {
		t.Fatal(err)
	}
	var files []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	})
	if len(files) != 6 {
		t.Fatalf("%d cache files, want 6", len(files))
	}
	b, _ := os.ReadFile(files[0])
	os.WriteFile(files[0], bytes.Replace(b, []byte("Answer:"), []byte("Answer :"), 1), 0o644)
	_, _, err := runGate(t, m, fsys, set, judge.Config{Cache: &judge.Cache{Dir: dir}})
	if err == nil || !strings.Contains(err.Error(), "does not hold the request") {
		t.Errorf("err = %v", err)
	}
	if errors.Is(err, context.Canceled) && !strings.Contains(err.Error(), "does not hold") {
		t.Errorf("the cause is lost: %v", err)
	}

	// A link in place of an entry is not followed.
	os.WriteFile(files[0], b, 0o644)
	os.Rename(files[1], files[1]+".real")
	if err := os.Symlink(files[1]+".real", files[1]); err != nil {
		t.Fatal(err)
	}
	_, _, err = runGate(t, m, fsys, set, judge.Config{Cache: &judge.Cache{Dir: dir}})
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("err = %v", err)
	}
}
