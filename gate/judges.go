package gate

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/gradegate/gradegate/gate/blind"
	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/judge"
	"github.com/gradegate/gradegate/gate/lint"
	"github.com/gradegate/gradegate/gate/multi"
	"github.com/gradegate/gradegate/gate/shard"
	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/dataset"
)

// errNotForModelGraders is how a command says it does not apply to a model
// grader.
func notForModelGraders(m *manifest.Manifest, what string) error {
	return &manifest.Error{File: m.File, Line: m.Line("grader.type"), Key: "grader.type",
		Msg: fmt.Sprintf("%s does not apply to a model grader (%s)", what, m.Grader.Type)}
}

// newJudge builds the runner of a model grader from the flags and the
// environment: OPENAI_API_KEY and OPENAI_BASE_URL. The key goes to the HTTP
// client and nowhere else.
func (a *Host) newJudge(g manifest.Grader, f JudgeOptions) (*judge.Judge, error) {
	cfg, err := a.judgeConfig(f)
	if err != nil {
		return nil, err
	}
	cfg.Grader = g
	return judge.New(cfg)
}

// judgeConfig is how the run asks models, from the flags and the
// environment: OPENAI_API_KEY and OPENAI_BASE_URL. The key goes to the
// HTTP client and nowhere else.
func (a *Host) judgeConfig(f JudgeOptions) (judge.Config, error) {
	cfg := judge.Config{
		BaseURL:     a.getenv("OPENAI_BASE_URL"),
		APIKey:      a.getenv("OPENAI_API_KEY"),
		HTTPClient:  &http.Client{},
		Concurrency: f.Concurrency,
		Repeats:     f.Repeats,
	}
	if cfg.BaseURL != "" {
		u, err := url.Parse(cfg.BaseURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return judge.Config{}, fmt.Errorf("%w: OPENAI_BASE_URL must be an http or https URL such as %s", manifest.ErrInput, judge.DefaultBaseURL)
		}
	}
	if f.Mode != "" {
		mode, err := judge.ParseCacheMode(f.Mode)
		if err != nil {
			return judge.Config{}, fmt.Errorf("%w: --judge-cache-mode %v", manifest.ErrInput, err)
		}
		if f.Cache == "" {
			return judge.Config{}, fmt.Errorf("%w: --judge-cache-mode needs --judge-cache DIR", manifest.ErrInput)
		}
		cfg.CacheMode = mode
	}
	if f.Cache != "" {
		cfg.Cache = &judge.Cache{Dir: f.Cache}
	}
	return cfg, nil
}

// maxMissesNamed bounds the cases a missing-key failure names.
const maxMissesNamed = 20

// planJudge counts the calls the run needs beyond the cache. Without a key,
// any is a tool failure naming the cases (exit 3); over grader.max_calls,
// none is sent and the run holds.
func planJudge(j *judge.Judge, tasks []grading.Task) error {
	misses, err := j.Plan(tasks)
	if err != nil {
		return err
	}
	if len(misses) > 0 && !j.HasKey() {
		return noKeyError(misses, len(tasks))
	}
	j.Reserve(len(misses))
	return nil
}

// noKeyError is the tool failure of a run whose cache misses requests
// with no key to ask them, naming the cases.
func noKeyError(misses []string, total int) error {
	named := misses[:min(len(misses), maxMissesNamed)]
	more := ""
	if len(misses) > len(named) {
		more = fmt.Sprintf(" and %d more", len(misses)-len(named))
	}
	return fmt.Errorf("the judge cache has no reply for %d of %d requests and OPENAI_API_KEY is not set: %s%s (record them with a key and --judge-cache DIR, or point --judge-cache at the recorded folder)",
		len(misses), total, strings.Join(named, ", "), more)
}

// multiModels builds, once per suite, the judges of a multi grader's
// score_model and label_model sub-graders, and counts the calls they need
// beyond the cache over the canaries and, unless canariesOnly, the shard's
// cases that have a sample: without a key any is a tool failure naming the
// cases (exit 3); over the multi grader's max_calls none is sent and the
// run holds. A multi grader without model sub-graders needs nothing.
func (a *Host) multiModels(s *Suite, f GraderOptions, canariesOnly bool, shard shard.Shard) error {
	if s.models != nil || len(s.Manifest.Grader.Multi.Models()) == 0 {
		return nil
	}
	models, err := multi.NewModels(s.Manifest.Grader.Multi, func(g manifest.Grader) (*judge.Judge, error) {
		return a.newJudge(g, f.Judge)
	})
	if err != nil {
		return err
	}
	tasks, err := multiTasks(s, canariesOnly, shard)
	if err != nil {
		return err
	}
	if !canariesOnly && s.Manifest.Gate.Metamorphic.Enabled {
		fmt.Fprintf(a.stderr, "gradegate: derived canaries: the model sub-graders' plan includes the variants of the canaries and of up to %d labeled cases (gate.metamorphic.sample), counted against max_calls\n", s.Manifest.Gate.Metamorphic.Sample)
	}
	misses, err := models.PlanAndReserve(tasks)
	if err != nil {
		return err
	}
	if len(misses) > 0 && !models.HasKey() {
		return noKeyError(misses, len(tasks))
	}
	s.models = models
	return nil
}

// multiTasks are the tasks a multi grader's run may ask its model
// sub-graders about: the canaries (and the built-in negatives), then the shard's cases that have a
// sample, read in one pass over the dataset.
func multiTasks(s *Suite, canariesOnly bool, sh shard.Shard) ([]grading.Task, error) {
	var tasks []grading.Task
	for _, c := range s.Manifest.Canaries {
		tasks = append(tasks, grading.Task{ID: c.Name, Sample: c.Sample, Item: c.Item})
	}
	if canariesOnly {
		// The canary command grades the built-in negatives too; a run's
		// plan has them among the derived ones.
		for _, c := range blind.BuiltinCanaries(s.Manifest) {
			tasks = append(tasks, grading.Task{ID: c.Name, Sample: c.Sample, Item: c.Item})
		}
		return tasks, nil
	}
	set, err := dataset.Load(s.FS, s.Manifest)
	if err != nil {
		return nil, err
	}
	derived := blind.PlanDerived(s.Manifest, set, sh)
	r := dataset.Open(s.FS, s.Manifest)
	count, index := max(sh.Count, 1), max(sh.Index, 1)
	for {
		c, ok := r.Next()
		if !ok {
			break
		}
		if c.Sample == nil || shard.ShardOf(c.ID, count) != index {
			continue
		}
		tasks = append(tasks, grading.Task{ID: c.ID, Sample: c.Sample, Item: c.ItemForGrader()})
	}
	if _, err := r.Close(); err != nil {
		return nil, err
	}
	return append(tasks, derived...), nil
}

// subGraderLint is the model grader lint of each model sub-grader of a
// multi grader (a model alias rather than a dated snapshot holds), its
// findings naming the sub-grader's keys and lines.
func subGraderLint(m *manifest.Manifest) []manifest.Finding {
	var out []manifest.Finding
	for _, sg := range m.Grader.Multi.Models() {
		key := "grader.graders." + sg.Name
		sub := *m
		sub.Grader = *sg.Model
		sub.Lines = map[string]int{"grader.model": m.Line(key + ".model"), "grader.input": m.Line(key + ".input")}
		for _, f := range lint.ModelGrader(&sub) {
			f.Message = strings.ReplaceAll(f.Message, "grader.model", key+".model")
			f.Message = strings.ReplaceAll(f.Message, "grader.input", key+".input")
			out = append(out, f)
		}
	}
	return out
}

// noteDerivedCalls says, before any model call is sent, how many calls the
// derived canaries (gate.metamorphic) may add and how many of them the
// judge cache cannot answer; they count against max_calls with the rest.
func (a *Host) noteDerivedCalls(derived []grading.Task, j *judge.Judge) error {
	if len(derived) == 0 {
		return nil
	}
	// A variant whose prompt cannot be rendered (an item field removed)
	// makes no call.
	calls := 0
	for _, t := range derived {
		k, err := j.RequestKey(t)
		if err != nil {
			return fmt.Errorf("%s: %w", t.ID, err)
		}
		if k != "" {
			calls++
		}
	}
	misses, err := j.Plan(derived)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stderr, "gradegate: derived canaries: %d variants, up to %d extra model calls, %d of them not in the judge cache (counted against max_calls)\n",
		len(derived), calls, len(misses))
	return nil
}

// judgeTasks are the tasks a run grades: the canaries, then the shard's
// cases that have a sample.
func judgeTasks(m *manifest.Manifest, set *dataset.Set, sh shard.Shard) []grading.Task {
	var tasks []grading.Task
	for _, c := range m.Canaries {
		tasks = append(tasks, grading.Task{ID: c.Name, Sample: c.Sample, Item: c.Item})
	}
	if set == nil {
		return tasks
	}
	count, index := max(sh.Count, 1), max(sh.Index, 1)
	for _, c := range set.Cases {
		if c.Sample == nil || shard.ShardOf(c.ID, count) != index {
			continue
		}
		tasks = append(tasks, grading.Task{ID: c.ID, Sample: c.Sample, Item: c.Item})
	}
	return tasks
}
