// Package judge grades with a model grader: OpenAI's score_model and
// label_model, asked by the gate itself over OpenAI's API (chat completions
// or responses). Nothing of the grader runs in Python and the API key never
// enters a sandbox: the gate renders the prompt from the sample and the
// item, sends it, and reads the reply strictly.
//
// Every call can be recorded in a Cache keyed by the digest of the exact
// request and replayed, so a run with a complete cache needs neither the
// network nor a key and gives the same verdict.
package judge

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/manifest"
)

// DefaultConcurrency is how many model calls are in flight at once.
const DefaultConcurrency = 8

// ErrorTypes of the outcomes a judge gives besides a reply.
const (
	// ErrTemplate: a template names a value the sample or item lacks.
	ErrTemplate = "TemplateError"
	// ErrNotSent: the call was not sent because the run's budget
	// (grader.max_calls) would be exceeded.
	ErrNotSent = "JudgeBudgetExceeded"
	// ErrInvalidReply: the reply is no score in range and none of the labels.
	ErrInvalidReply = "InvalidReply"
)

// Config is how a Judge asks.
type Config struct {
	// Grader is the manifest's grader; Grader.Judge must be set.
	Grader manifest.Grader
	// BaseURL is the API's base URL (DefaultBaseURL when empty), without
	// a trailing slash.
	BaseURL string
	// APIKey authenticates the calls; without it only the cache answers.
	APIKey string
	// HTTPClient sends the calls; http.DefaultClient when nil.
	HTTPClient *http.Client
	// Concurrency bounds the calls in flight; DefaultConcurrency when 0.
	Concurrency int
	// Cache and CacheMode record and replay calls; nil: no cache.
	Cache     *Cache
	CacheMode CacheMode
	// MaxRetries is the retries of one call; DefaultMaxRetries when nil.
	MaxRetries *int
	// Sleep and Random drive the retry backoff; tests replace them.
	Sleep  func(ctx context.Context, d time.Duration) error
	Random func() float64
	// Now is the clock for durations; time.Now when nil.
	Now func() time.Time
	// Repeats is gate.repeats: how many times each task is asked (odd); 0
	// or 1 asks once. The task's outcome is the majority's: the median
	// score.
	Repeats int
}

// newClient is the API client of cfg, each attempt bounded by timeout;
// nil without a key.
func (cfg Config) newClient(timeout time.Duration) *client {
	if cfg.APIKey == "" {
		return nil
	}
	c := &client{
		baseURL:    strings.TrimSuffix(cfg.BaseURL, "/"),
		key:        cfg.APIKey,
		http:       cfg.HTTPClient,
		timeout:    timeout,
		maxRetries: DefaultMaxRetries,
		sleep:      cfg.Sleep,
		random:     cfg.Random,
	}
	if c.baseURL == "" {
		c.baseURL = DefaultBaseURL
	}
	if c.http == nil {
		c.http = http.DefaultClient
	}
	if cfg.MaxRetries != nil {
		c.maxRetries = max(*cfg.MaxRetries, 0)
	}
	if c.sleep == nil {
		c.sleep = sleepCtx
	}
	if c.random == nil {
		c.random = rand.Float64
	}
	return c
}

// Judge grades tasks by asking the model. It implements gate.Runner.
type Judge struct {
	g       manifest.Grader
	format  json.RawMessage // the structured output asked for
	client  *client         // nil without a key
	cache   *Cache
	mode    CacheMode
	conc    int
	now     func() time.Time
	repeats int

	mu     sync.Mutex
	budget int // calls still allowed; -1: no bound
	usage  results.JudgeUsage
}

var _ grading.Runner = (*Judge)(nil)

// New returns a Judge for cfg. It makes no call.
func New(cfg Config) (*Judge, error) {
	g := cfg.Grader
	if g.Judge == nil || !manifest.IsModelType(g.Type) {
		return nil, fmt.Errorf("judge: grader type %q is not a model grader", g.Type)
	}
	j := &Judge{g: g, cache: cfg.Cache, mode: cfg.CacheMode, conc: cfg.Concurrency, now: cfg.Now, budget: -1, repeats: max(cfg.Repeats, 1)}
	format, err := responseFormat(g)
	if err != nil {
		return nil, err
	}
	j.format = format
	if j.cache == nil {
		j.mode = CacheOff
	} else if j.mode == "" {
		j.mode = CacheReadWrite
	}
	if j.conc <= 0 {
		j.conc = DefaultConcurrency
	}
	if j.now == nil {
		j.now = time.Now
	}
	if g.Judge.MaxCalls > 0 {
		j.budget = g.Judge.MaxCalls
	}
	j.client = cfg.newClient(time.Duration(g.TimeoutSeconds) * time.Second)
	j.usage = results.JudgeUsage{
		Type:      g.Type,
		Model:     g.Judge.Model,
		Endpoint:  g.Judge.Endpoint,
		MaxCalls:  g.Judge.MaxCalls,
		CacheMode: string(j.mode),
	}
	return j, nil
}

// Sandbox says that nothing ran in a sandbox: a model grader runs no
// grader code at all.
func (j *Judge) Sandbox() grading.Sandbox { return grading.Sandbox{UID: -1} }

// Usage is what the calls so far cost.
func (j *Judge) Usage() *results.JudgeUsage {
	j.mu.Lock()
	defer j.mu.Unlock()
	u := j.usage
	u.NotSentIDs = listed(u.NotSentIDs)
	u.InvalidIDs = listed(u.InvalidIDs)
	return &u
}

// maxListed bounds the IDs a usage block names; its counts count them all.
const maxListed = 100

// addListed records id in list, keeping the list short: past twice
// maxListed it keeps the maxListed that sort first, which are the ones
// listed will show.
func addListed(list *[]string, id string) {
	*list = append(*list, id)
	if len(*list) > 2*maxListed {
		slices.Sort(*list)
		*list = (*list)[:maxListed]
	}
}

// listed is ids sorted (calls finish in any order) and cut to maxListed.
func listed(ids []string) []string {
	if len(ids) == 0 {
		return nil
	}
	out := slices.Clone(ids)
	slices.Sort(out)
	return out[:min(len(out), maxListed)]
}

// Plan returns the IDs of the tasks the cache cannot answer: the calls a
// run needs. A task whose prompt cannot be rendered needs no call.
func (j *Judge) Plan(tasks []grading.Task) ([]string, error) {
	var misses []string
	for _, t := range tasks {
		r, err := j.request(t)
		var te *TemplateError
		if errors.As(err, &te) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.ID, err)
		}
		for k := range j.repeats {
			if j.mode.reads() && j.cache.has(r.asked(k)) {
				continue
			}
			misses = append(misses, t.ID)
		}
	}
	return misses, nil
}

// Reserve records that a run needs needed calls beyond the cache. When
// that is more than grader.max_calls, no call is sent at all: a run that
// cannot finish within its budget spends none of it, and every task the
// cache cannot answer errors as not sent.
func (j *Judge) Reserve(needed int) { j.ReserveShared(needed, needed) }

// ReserveShared is Reserve for a judge that shares its budget with others
// (a multi grader's model sub-graders): needed calls are this judge's,
// total all of theirs, and when total is more than grader.max_calls none
// of them sends any.
func (j *Judge) ReserveShared(needed, total int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.usage.Needed += needed
	if j.budget >= 0 && total > j.budget {
		j.budget = 0
	}
}

// RequestKey is the digest of the request a task makes, the cache's key:
// two tasks with the same key are the same call. A task whose prompt cannot
// be rendered has none ("").
func (j *Judge) RequestKey(t grading.Task) (string, error) {
	r, err := j.request(t)
	var te *TemplateError
	if errors.As(err, &te) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return r.key, nil
}

// HasKey reports whether the judge may call the API.
func (j *Judge) HasKey() bool { return j.client != nil }

func (j *Judge) request(t grading.Task) (request, error) {
	v, err := decodeVars(t.Sample, t.Item)
	if err != nil {
		return request{}, err
	}
	return buildRequest(j.g, j.format, v)
}

// Grade asks the model for every task, at most Concurrency calls at once,
// and returns the outcomes in task order. The error is the tool failing:
// the API refusing or unreachable after its retries, a miss without a key,
// a corrupt cache. A reply that cannot be read is an invalid_return
// outcome, never an error and never a score.
func (j *Judge) Grade(ctx context.Context, tasks []grading.Task) ([]grading.Outcome, error) {
	return grading.GradeByStream(ctx, j, tasks)
}

// grade asks for one task, gate.repeats times.
func (j *Judge) grade(ctx context.Context, t grading.Task) (grading.Outcome, error) {
	r, err := j.request(t)
	var te *TemplateError
	if errors.As(err, &te) {
		return grading.Outcome{Class: grading.ClassGraderException, Error: &grading.CaseError{
			Class: grading.ClassGraderException, Type: ErrTemplate, Message: te.Error(),
		}}, nil
	}
	if err != nil {
		return grading.Outcome{}, err
	}
	if j.repeats <= 1 {
		return j.ask(ctx, t, r)
	}
	asks := make([]grading.Outcome, j.repeats)
	for k := range asks {
		if asks[k], err = j.ask(ctx, t, r.asked(k)); err != nil {
			return grading.Outcome{}, err
		}
	}
	return j.majority(asks), nil
}

// majority folds the repeated asks of one task into its outcome. Any ask
// that gave no score makes the task that ask's outcome: an invalid reply
// is a defect of the judge, not a vote. Otherwise the outcome is the ask
// with the median score, which is on the side of grader.pass_threshold
// that most asks are (the number of asks is odd), and its judge field
// lists every score.
func (j *Judge) majority(asks []grading.Outcome) grading.Outcome {
	var ms float64
	for _, o := range asks {
		ms += o.DurationMS
	}
	for _, o := range asks {
		if o.Class != grading.ClassOK {
			o.Repeats, o.DurationMS = len(asks), ms
			return o
		}
	}
	order := make([]int, len(asks))
	scores := make([]float64, len(asks))
	passed := 0
	for i, o := range asks {
		order[i], scores[i] = i, *o.Score
		if *o.Score >= j.g.PassThreshold {
			passed++
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(scores[a], scores[b]) })
	o := asks[order[len(order)/2]]
	var info map[string]any
	if json.Unmarshal(o.Judge, &info) == nil {
		info["repeats"] = scores
		o.Judge, _ = json.Marshal(info)
	}
	o.Repeats, o.RepeatsDisagree, o.DurationMS = len(asks), passed > 0 && passed < len(asks), ms
	return o
}

// ask makes one call (or replays it from the cache).
func (j *Judge) ask(ctx context.Context, t grading.Task, r request) (grading.Outcome, error) {
	if j.mode.reads() {
		e, ok, err := j.cache.get(r)
		if err != nil {
			return grading.Outcome{}, err
		}
		if ok {
			env, err := parseEnvelope(r.path, e.Response)
			if err != nil {
				return grading.Outcome{}, fmt.Errorf("judge cache entry %s: %w", r.key, err)
			}
			j.mu.Lock()
			j.usage.Cached++
			j.usage.CachedTokens.Input += env.tokens.Input
			j.usage.CachedTokens.Output += env.tokens.Output
			j.mu.Unlock()
			return j.outcome(t, r, env, e.DurationMS), nil
		}
	}
	if !j.take() {
		j.mu.Lock()
		j.usage.NotSent++
		addListed(&j.usage.NotSentIDs, t.ID)
		j.mu.Unlock()
		return grading.Outcome{Class: grading.ClassGraderException, Error: &grading.CaseError{
			Class: grading.ClassGraderException, Type: ErrNotSent,
			Message: fmt.Sprintf("not sent: grader.max_calls (%d) is less than the calls this run needs", j.g.Judge.MaxCalls),
		}}, nil
	}
	if j.client == nil {
		return grading.Outcome{}, fmt.Errorf("the judge cache has no reply for this request (%s) and there is no OPENAI_API_KEY to ask the model: %w", r.key, errNoKey)
	}
	began := j.now()
	a, err := j.client.do(ctx, r)
	if err != nil {
		return grading.Outcome{}, fmt.Errorf("asking %s: %w", j.g.Judge.Model, err)
	}
	ms := float64(j.now().Sub(began).Microseconds()) / 1000
	env, err := parseEnvelope(r.path, a.body)
	if err != nil {
		return grading.Outcome{}, fmt.Errorf("asking %s: %w", j.g.Judge.Model, err)
	}
	j.mu.Lock()
	j.usage.Calls++
	j.usage.Retries += a.retries
	j.usage.Tokens.Input += env.tokens.Input
	j.usage.Tokens.Output += env.tokens.Output
	j.mu.Unlock()
	if j.mode.writes() {
		if err := j.cache.put(r, a.body, ms); err != nil {
			return grading.Outcome{}, err
		}
	}
	return j.outcome(t, r, env, ms), nil
}

// take spends one call of the budget.
func (j *Judge) take() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.budget == 0 {
		return false
	}
	if j.budget > 0 {
		j.budget--
	}
	return true
}

// judged is a case's "judge" field: the reply and what was read from it,
// so a reviewer sees why the case passed or failed.
type judged struct {
	Model   string `json:"model"`
	Reply   string `json:"reply"`
	Label   string `json:"label,omitempty"`
	Request string `json:"request_sha256"`
}

// outcome turns a reply into the task's outcome.
func (j *Judge) outcome(t grading.Task, r request, env envelope, ms float64) grading.Outcome {
	info, _ := json.Marshal(judged{Model: j.g.Judge.Model, Reply: cut(env.text), Request: r.key})
	v, err := parseReply(j.g, env)
	if err != nil {
		j.mu.Lock()
		j.usage.InvalidReplies++
		addListed(&j.usage.InvalidIDs, t.ID)
		j.mu.Unlock()
		return grading.Outcome{Class: grading.ClassInvalidReturn, Judge: info, DurationMS: ms, Error: &grading.CaseError{
			Class: grading.ClassInvalidReturn, Type: ErrInvalidReply, Message: err.Error(),
		}}
	}
	if v.label != "" {
		info, _ = json.Marshal(judged{Model: j.g.Judge.Model, Reply: cut(env.text), Label: v.label, Request: r.key})
	}
	score := v.score
	return grading.Outcome{Class: grading.ClassOK, Score: &score, Scores: map[string]float64{"score": score}, Judge: info, DurationMS: ms}
}
