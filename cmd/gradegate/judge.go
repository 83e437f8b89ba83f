package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/gradegate/gradegate/gate"
	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/judge"
	"github.com/gradegate/gradegate/gate/lint"
	"github.com/gradegate/gradegate/gate/multi"
	"github.com/gradegate/gradegate/gate/render"
	"github.com/gradegate/gradegate/gate/shadow"
	"github.com/gradegate/gradegate/gate/shard"
	"github.com/gradegate/gradegate/gate/verdict"
	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/dataset"
)

// judgeFlags are the options of a model grader's calls.
type judgeFlags struct {
	cache       string
	mode        string
	concurrency int
}

func (j *judgeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&j.cache, "judge-cache", "", "model graders: record and replay model calls in this folder")
	fs.StringVar(&j.mode, "judge-cache-mode", "", "model graders: read, write or readwrite (default readwrite)")
	j.concurrency = judge.DefaultConcurrency
	fs.Var(positive{&j.concurrency, 256}, "judge-concurrency", "model graders: calls in flight at once, 1 to 256")
}

// errNotForModelGraders is how a command says it does not apply to a model
// grader.
func notForModelGraders(m *manifest.Manifest, what string) error {
	return &manifest.Error{File: m.File, Line: m.Line("grader.type"), Key: "grader.type",
		Msg: fmt.Sprintf("%s does not apply to a model grader (%s)", what, m.Grader.Type)}
}

// newJudge builds the runner of a model grader from the flags and the
// environment: OPENAI_API_KEY and OPENAI_BASE_URL. The key goes to the HTTP
// client and nowhere else.
func (a *app) newJudge(g manifest.Grader, f judgeFlags) (*judge.Judge, error) {
	cfg := judge.Config{
		Grader:      g,
		BaseURL:     a.getenv("OPENAI_BASE_URL"),
		APIKey:      a.getenv("OPENAI_API_KEY"),
		HTTPClient:  &http.Client{},
		Concurrency: f.concurrency,
	}
	if cfg.BaseURL != "" {
		u, err := url.Parse(cfg.BaseURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil, fmt.Errorf("%w: OPENAI_BASE_URL must be an http or https URL such as %s", manifest.ErrInput, judge.DefaultBaseURL)
		}
	}
	if f.mode != "" {
		mode, err := judge.ParseCacheMode(f.mode)
		if err != nil {
			return nil, fmt.Errorf("%w: --judge-cache-mode %v", manifest.ErrInput, err)
		}
		if f.cache == "" {
			return nil, fmt.Errorf("%w: --judge-cache-mode needs --judge-cache DIR", manifest.ErrInput)
		}
		cfg.CacheMode = mode
	}
	if f.cache != "" {
		cfg.Cache = &judge.Cache{Dir: f.cache}
	}
	return judge.New(cfg)
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
func (a *app) multiModels(s *suite, f gradeFlags, canariesOnly bool, shard shard.Shard) error {
	if s.models != nil || len(s.m.Grader.Multi.Models()) == 0 {
		return nil
	}
	models, err := multi.NewModels(s.m.Grader.Multi, func(g manifest.Grader) (*judge.Judge, error) {
		return a.newJudge(g, f.judge)
	})
	if err != nil {
		return err
	}
	tasks, err := multiTasks(s, canariesOnly, shard)
	if err != nil {
		return err
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
// sub-graders about: the canaries, then the shard's cases that have a
// sample, read in one pass over the dataset.
func multiTasks(s *suite, canariesOnly bool, sh shard.Shard) ([]grading.Task, error) {
	var tasks []grading.Task
	for _, c := range s.m.Canaries {
		tasks = append(tasks, grading.Task{ID: c.Name, Sample: c.Sample, Item: c.Item})
	}
	if canariesOnly {
		return tasks, nil
	}
	r := dataset.Open(s.fsys, s.m)
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
	return tasks, nil
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

// gradeJudge is `run` and `canary` for a model grader: the gate asks the
// model itself, and no sandbox is needed because no grader code runs.
func (a *app) gradeJudge(ctx context.Context, name string, s *suite, set *dataset.Set, f gradeFlags, opts gate.Options, hostedOn bool) outcome {
	if hostedOn {
		return a.fail(name, notForModelGraders(s.m, "--hosted (parity with OpenAI's hosted Python grader)"))
	}
	j, err := a.newJudge(s.m.Grader, f.judge)
	if err != nil {
		return a.fail(name, err)
	}
	if err := planJudge(j, judgeTasks(s.m, set, opts.Shard)); err != nil {
		return a.fail(name, err)
	}
	res, err := gate.Run(ctx, gate.Inputs{Manifest: s.m, FS: s.fsys, Dataset: set}, j, opts)
	if err != nil {
		return a.fail(name, err)
	}
	verdict.AddJudge(res, j.Usage(), lint.ModelGrader(s.m))
	if err := a.checkJudgeDeterminism(ctx, s, set, !opts.CanariesOnly, f, opts.Shard, res, j.HasKey()); err != nil {
		return a.fail(name, err)
	}
	return a.finish(name, res, f)
}

// shadowJudge is `shadow` for a model grader: --base names another
// manifest whose grader block is the base (another model or another
// prompt); the cases and canaries are the head manifest's. Each grader is
// identified by the digest of its canonical keys.
func (a *app) shadowJudge(ctx context.Context, s *suite, set *dataset.Set, basePath string, f gradeFlags) (*shadow.Report, error) {
	base, err := loadSuite(basePath, f.limits)
	if err != nil {
		return nil, err
	}
	if base.m.Grader.Judge == nil {
		return nil, &manifest.Error{File: base.m.File, Line: base.m.Line("grader.type"), Key: "grader.type",
			Msg: "the base of a model grader's shadow must be a manifest with a model grader (score_model or label_model)"}
	}
	head := s.m.Grader
	// The head's timeout and budget apply to both sides.
	bg := base.m.Grader
	bg.TimeoutSeconds = head.TimeoutSeconds
	bj := *bg.Judge
	bj.MaxCalls = head.Judge.MaxCalls
	bg.Judge = &bj
	baseSrc, err := json.Marshal(manifest.CanonicalModelGrader(bg))
	if err != nil {
		return nil, err
	}
	headSrc, err := json.Marshal(manifest.CanonicalModelGrader(head))
	if err != nil {
		return nil, err
	}
	graders := []struct {
		src []byte
		g   manifest.Grader
	}{{baseSrc, bg}, {headSrc, head}}
	var usage []*judge.Judge
	newRunner := func(ctx context.Context, src []byte) (grading.Runner, func(), error) {
		for _, gr := range graders {
			if !bytes.Equal(src, gr.src) {
				continue
			}
			j, err := a.newJudge(gr.g, f.judge)
			if err != nil {
				return nil, nil, err
			}
			if err := planJudge(j, judgeTasks(s.m, set, shard.Shard{})); err != nil {
				return nil, nil, err
			}
			usage = append(usage, j)
			return j, func() {}, nil
		}
		return nil, nil, errors.New("shadow: no model grader for these bytes")
	}
	rep, err := shadow.Run(ctx, baseSrc, headSrc, s.m, set.Cases, newRunner)
	if err != nil {
		return nil, err
	}
	for i, j := range usage {
		side := [...]string{"base", "head"}[min(i, 1)]
		fmt.Fprintf(a.stderr, "gradegate shadow: %s %s\n", side, render.JudgeLine(j.Usage()))
	}
	return rep, nil
}
