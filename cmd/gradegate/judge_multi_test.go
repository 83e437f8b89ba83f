package main

import (
	"bytes"
	"encoding/json"
	"github.com/gradegate/gradegate/gate"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/gradegate/gradegate/gate/judge/judgetest"
	"github.com/gradegate/gradegate/gate/results"
)

// keywordJudge scores 5 when the answer states the reference and 1
// otherwise, like fakeModel, for judgetest's fake.
func keywordJudge(prompt string) string {
	m := promptRE.FindStringSubmatch(prompt)
	if m != nil && strings.Contains(strings.ToLower(m[2]), strings.ToLower(m[1])) {
		return judgetest.Score(5)
	}
	return judgetest.Score(1)
}

var durationRE = regexp.MustCompile(`"duration_ms":[0-9.e+-]+,?`)

// copyDir copies an example folder to a temp folder.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

const judgedSubGrader = `    judged:
      type: score_model
      model: gpt-4o-mini-2024-07-18
      input:
        - role: user
          content: "Does the answer name the keyword?\nReference: {{item.keyword}}\nAnswer: {{sample.output_text}}"
      range: [1, 5]
      pass_threshold: 4
      sampling_params: {temperature: 0, seed: 7}
canaries:
`

// TestMultiModelSubGrader runs the multi example with a score_model
// sub-grader added: the gate asks the fake model, records the calls, and a
// second run with the fake stopped and no key replays them with the same
// cases, scores and verdict.
func TestMultiModelSubGrader(t *testing.T) {
	t.Parallel()
	fake := judgetest.New(t, keywordJudge)
	dir := copyDir(t, "../../testdata/examples/multi")
	m := rewrite(t, filepath.Join(dir, "gradegate.yaml"), "canaries:\n", judgedSubGrader)
	m = rewrite(t, m, `"0.85 * similarity + 0.15 * mentions"`, `"0.8 * similarity + 0.1 * mentions + 0.1 * (judged - 1) / 4"`)
	// The calls counted below are the cases' and canaries'; two derived
	// canaries with one prompt may both be asked when they are in flight
	// at once, so they are left out here (the multi example's script runs
	// them); so is the built-in empty answer, whose prompt is the empty
	// canary's.
	m = rewrite(t, m, "gate:\n", "gate:\n  metamorphic: {enabled: false}\n  builtin_canaries: {enabled: false, reason: counted calls}\n")
	cache := filepath.Join(t.TempDir(), "cache")
	withKey := judgeEnv("OPENAI_API_KEY", judgetest.Key, "OPENAI_BASE_URL", fake.URL())

	first := filepath.Join(t.TempDir(), "first.json")
	code1, out1, err1 := runCLI(t, withKey, "run", m, "--judge-cache", cache, "--results", first, "--canary-seed", "7", "--python", "/usr/bin/python3")
	if code1 != exitPass && code1 != exitHold {
		t.Fatalf("first run: exit %d\n%s\n%s", code1, out1, err1)
	}
	a := readJudgeResults(t, first)
	// 4 canaries and 9 cases, each asked once although mutation testing
	// grades them again with every mutant.
	if n := fake.Requests(); n != 13 || fake.BadAuth() != 0 || a.Judge == nil || a.Judge.Calls != 13 {
		t.Fatalf("%d requests (%d without the key), usage %+v\n%s", n, fake.BadAuth(), a.Judge, err1)
	}
	judged := 0
	for _, c := range a.Cases {
		b, _ := json.Marshal(c)
		if bytes.Contains(b, []byte(`"judged":5`)) || bytes.Contains(b, []byte(`"judged":1`)) {
			judged++
		}
	}
	if judged != len(a.Cases) || judged == 0 {
		t.Errorf("%d of %d cases have the judged score", judged, len(a.Cases))
	}
	if a.MutationScore == nil {
		t.Error("no mutation score: the Python part was not mutation tested")
	}

	fake.Close()
	second := filepath.Join(t.TempDir(), "second.json")
	code2, out2, err2 := runCLI(t, judgeEnv(), "run", m, "--judge-cache", cache, "--judge-cache-mode", "read", "--results", second, "--canary-seed", "7", "--python", "/usr/bin/python3")
	if code2 != code1 {
		t.Fatalf("replay: exit %d, recorded %d\n%s\n%s", code2, code1, out2, err2)
	}
	b := readJudgeResults(t, second)
	if b.Judge.Calls != 0 || b.Judge.Cached != 13 || a.Judge.Cached != 0 {
		t.Errorf("replay usage %+v", b.Judge)
	}
	for _, part := range []func(r *results.Results) any{
		func(r *results.Results) any { return r.Cases },
		func(r *results.Results) any { return r.Canaries },
		func(r *results.Results) any { return r.Reasons },
		func(r *results.Results) any { return r.Verdict },
	} {
		// The Python part's durations are the only thing measured anew.
		x := durationRE.ReplaceAll(mustMarshal(t, part(a)), nil)
		y := durationRE.ReplaceAll(mustMarshal(t, part(b)), nil)
		if !bytes.Equal(x, y) {
			t.Errorf("the replay differs from the recorded run:\n%s\n%s", x, y)
		}
	}
	for _, text := range []string{out1, err1, out2, err2} {
		if strings.Contains(text, judgetest.Key) {
			t.Error("an output shows the key")
		}
	}
	for _, f := range []string{first, second} {
		if raw, _ := os.ReadFile(f); bytes.Contains(raw, []byte(judgetest.Key)) {
			t.Errorf("%s holds the key", f)
		}
	}

	t.Run("a miss without a key is exit 3 naming the cases", func(t *testing.T) {
		code, _, errs := runCLI(t, judgeEnv(), "run", m, "--judge-cache", t.TempDir(), "--python", "/usr/bin/python3")
		if code != exitInternal || !strings.Contains(errs, "OPENAI_API_KEY is not set") || !strings.Contains(errs, "capital-canada") {
			t.Errorf("exit %d\n%s", code, errs)
		}
	})

	t.Run("the determinism check asks the model sub-graders again", func(t *testing.T) {
		live := judgetest.New(t, keywordJudge)
		asked := rewrite(t, m, "gate:\n", "gate:\n  determinism: {sample: 2}\n")
		resultsPath := filepath.Join(t.TempDir(), "r.json")
		env := judgeEnv("OPENAI_API_KEY", judgetest.Key, "OPENAI_BASE_URL", live.URL())
		code, out, errs := runCLI(t, env, "canary", asked, "--results", resultsPath, "--python", "/usr/bin/python3")
		res := readJudgeResults(t, resultsPath)
		// 4 canaries asked by the run, then twice more with no cache.
		if code != exitPass || res.Determinism == nil || res.Determinism.Asked != results.DeterminismPythonModel || live.Requests() != 12 || res.Judge.Calls != 12 {
			t.Errorf("exit %d, %d requests, determinism %+v, judge %+v\n%s%s", code, live.Requests(), res.Determinism, res.Judge, out, errs)
		}
		// Replayed without a key, the Python part is checked and the
		// model sub-graders' recorded answers are reused, saying so.
		code, out, errs = runCLI(t, judgeEnv(), "canary", asked, "--judge-cache", cache, "--judge-cache-mode", "read", "--results", resultsPath, "--python", "/usr/bin/python3")
		res = readJudgeResults(t, resultsPath)
		if code != exitPass || res.Determinism == nil || res.Determinism.Asked != "" || !strings.Contains(errs, "skipped: OPENAI_API_KEY is not set") {
			t.Errorf("replay: exit %d, determinism %+v\n%s%s", code, res.Determinism, out, errs)
		}
	})

	t.Run("over budget, nothing is sent and the gate holds", func(t *testing.T) {
		live := judgetest.New(t, keywordJudge)
		over := rewrite(t, m, "type: multi\n", "type: multi\n  max_calls: 12\n")
		resultsPath := filepath.Join(t.TempDir(), "r.json")
		env := judgeEnv("OPENAI_API_KEY", judgetest.Key, "OPENAI_BASE_URL", live.URL())
		code, out, errs := runCLI(t, env, "canary", over, "--results", resultsPath, "--python", "/usr/bin/python3")
		if code != exitPass && code != exitHold {
			t.Fatalf("exit %d\n%s\n%s", code, out, errs)
		}
		// canary asks about 4 canaries only: within 12.
		if live.Requests() != 4 {
			t.Errorf("canary: %d requests, want 4", live.Requests())
		}
		over = rewrite(t, m, "type: multi\n", "type: multi\n  max_calls: 3\n")
		code, out, errs = runCLI(t, env, "canary", over, "--results", resultsPath, "--python", "/usr/bin/python3")
		res := readJudgeResults(t, resultsPath)
		if code != exitHold || live.Requests() != 4 || res.Reasons[0].Code != results.ReasonJudgeBudgetExceeded || res.Judge.NotSent != 4 {
			t.Errorf("exit %d, %d requests, reasons %+v, judge %+v\n%s%s", code, live.Requests(), res.Reasons, res.Judge, out, errs)
		}
	})
}

// flakyJudge answers like keywordJudge the first time it sees a prompt and
// 4 instead of 5 every second time: a judge whose sampling is not pinned.
type flakyJudge struct {
	mu   sync.Mutex
	seen map[string]int
}

func (f *flakyJudge) answer(prompt string) string {
	f.mu.Lock()
	f.seen[prompt]++
	n := f.seen[prompt]
	f.mu.Unlock()
	r := keywordJudge(prompt)
	if r == judgetest.Score(5) && n%2 == 0 {
		return judgetest.Score(4)
	}
	return r
}

// TestJudgeDeterminism is the determinism check of a model grader: off
// unless gate.determinism is written, asked twice with the cache off when
// it is, skipped with its reason without a key or within max_calls.
func TestJudgeDeterminism(t *testing.T) {
	dir := copyExample(t)
	manifestPath := filepath.Join(dir, "gradegate.yaml")
	// The request counts below are the determinism check's: without the
	// derived canaries' calls.
	asked := rewrite(t, manifestPath, "gate:\n", "gate:\n  determinism: {sample: 3}\n  metamorphic: {enabled: false}\n")
	cache := filepath.Join(dir, "judge-cache")

	t.Run("not written, not run", func(t *testing.T) {
		resultsPath := filepath.Join(t.TempDir(), "r.json")
		code, out, errs := runCLI(t, judgeEnv(), "run", manifestPath, "--judge-cache", cache, "--judge-cache-mode", "read", "--results", resultsPath)
		if res := readJudgeResults(t, resultsPath); code != exitPass || res.Determinism != nil || strings.Contains(errs, "determinism") {
			t.Errorf("exit %d, determinism %+v\n%s%s", code, res.Determinism, out, errs)
		}
	})

	t.Run("replay without a key says it skipped", func(t *testing.T) {
		resultsPath := filepath.Join(t.TempDir(), "r.json")
		code, out, errs := runCLI(t, judgeEnv(), "run", asked, "--judge-cache", cache, "--judge-cache-mode", "read", "--results", resultsPath)
		res := readJudgeResults(t, resultsPath)
		if code != exitPass || res.Determinism != nil || !strings.Contains(errs, "determinism check of the model graders skipped: OPENAI_API_KEY is not set") {
			t.Fatalf("exit %d, determinism %+v\n%s%s", code, res.Determinism, out, errs)
		}
		found := false
		for _, f := range res.Findings {
			found = found || (f.Code == gate.CodeDeterminismSkipped && f.Line > 0)
		}
		if !found {
			t.Errorf("no determinism_skipped finding in %+v", res.Findings)
		}
	})

	t.Run("a flaky judge holds", func(t *testing.T) {
		fj := &flakyJudge{seen: map[string]int{}}
		fake := judgetest.New(t, fj.answer)
		env := judgeEnv("OPENAI_API_KEY", judgetest.Key, "OPENAI_BASE_URL", fake.URL())
		resultsPath := filepath.Join(t.TempDir(), "r.json")
		// The cache answers the run; the check asks again with it off.
		code, out, errs := runCLI(t, env, "run", asked, "--judge-cache", cache, "--judge-cache-mode", "read", "--results", resultsPath)
		res := readJudgeResults(t, resultsPath)
		d := res.Determinism
		if code != exitHold || d == nil || d.Asked != results.DeterminismModel || d.Canaries != 3 || d.Cases != 3 || len(d.Differed) == 0 {
			t.Fatalf("exit %d, determinism %+v\n%s%s", code, d, out, errs)
		}
		// 2 canaries and 3 cases asked twice; the fixture without its
		// reference is never sent.
		if fake.Requests() != 10 || res.Judge.Calls != 10 || res.Judge.Cached != 10 {
			t.Errorf("%d requests, usage %+v", fake.Requests(), res.Judge)
		}
		found := false
		for _, r := range res.Reasons {
			found = found || (r.Code == results.ReasonNondeterministicGrader && strings.Contains(r.Message, "the model asked again with the judge cache off"))
		}
		if !found {
			t.Errorf("reasons %+v", res.Reasons)
		}
		if entries, _ := os.ReadDir(cache); len(entries) == 0 {
			t.Error("the cache is gone")
		}
	})

	t.Run("within max_calls or skipped", func(t *testing.T) {
		fake := judgetest.New(t, keywordJudge)
		env := judgeEnv("OPENAI_API_KEY", judgetest.Key, "OPENAI_BASE_URL", fake.URL())
		tight := rewrite(t, asked, "max_calls: 50", "max_calls: 15")
		resultsPath := filepath.Join(t.TempDir(), "r.json")
		code, out, errs := runCLI(t, env, "run", tight, "--results", resultsPath)
		res := readJudgeResults(t, resultsPath)
		if code != exitPass || res.Determinism != nil || fake.Requests() != 10 || !strings.Contains(errs, "grader.max_calls (15) leaves 5") {
			t.Errorf("exit %d, %d requests, determinism %+v\n%s%s", code, fake.Requests(), res.Determinism, out, errs)
		}
		code, out, errs = runCLI(t, env, "run", asked, "--results", resultsPath)
		res = readJudgeResults(t, resultsPath)
		if code != exitPass || res.Determinism == nil || res.Determinism.Status != results.StatusPass || fake.Requests() != 30 {
			t.Errorf("exit %d, %d requests, determinism %+v\n%s%s", code, fake.Requests(), res.Determinism, out, errs)
		}
	})
}
