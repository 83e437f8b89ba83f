package multi

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/judge"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/manifest"
)

// Models asks a multi grader's score_model and label_model sub-graders:
// one judge per sub-grader, the gate making the calls. Each task is asked
// once per Models whatever the number of runners that combine its answer
// (the grader, each mutant of its Python part, both sides of a shadow):
// the model part does not change when the Python part does.
type Models struct {
	names  []string
	judges map[string]*judge.Judge

	mu   sync.Mutex
	memo map[memoKey]grading.Outcome
}

type memoKey struct {
	name    string
	request string
}

// NewModels builds a judge for each model sub-grader of mg with newJudge;
// nil when mg has none.
func NewModels(mg *manifest.MultiGrader, newJudge func(manifest.Grader) (*judge.Judge, error)) (*Models, error) {
	subs := mg.Models()
	if len(subs) == 0 {
		return nil, nil
	}
	m := &Models{judges: map[string]*judge.Judge{}, memo: map[memoKey]grading.Outcome{}}
	for _, sg := range subs {
		j, err := newJudge(*sg.Model)
		if err != nil {
			return nil, fmt.Errorf("sub-grader %s: %w", sg.Name, err)
		}
		m.names = append(m.names, sg.Name)
		m.judges[sg.Name] = j
	}
	return m, nil
}

// HasKey reports whether the model may be asked (not only the cache).
func (m *Models) HasKey() bool {
	for _, j := range m.judges {
		if !j.HasKey() {
			return false
		}
	}
	return true
}

// PlanAndReserve counts the calls each sub-grader needs beyond its cache
// and returns the IDs of the tasks that need one (sorted, each once). When
// the calls add up to more than the multi grader's max_calls, none is
// sent: every task the cache cannot answer errors as not sent, and the
// run holds.
func (m *Models) PlanAndReserve(tasks []grading.Task) ([]string, error) {
	needed := map[string]int{}
	total := 0
	var ids []string
	seen := map[string]bool{}
	for _, name := range m.names {
		misses, err := m.judges[name].Plan(tasks)
		if err != nil {
			return nil, fmt.Errorf("sub-grader %s: %w", name, err)
		}
		needed[name] = len(misses)
		total += len(misses)
		for _, id := range misses {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	for _, name := range m.names {
		m.judges[name].ReserveShared(needed[name], total)
	}
	slices.Sort(ids)
	return ids, nil
}

// Grade asks every model sub-grader about every task (those asked before
// are answered from memory) and returns the outcomes by sub-grader name,
// in task order.
func (m *Models) Grade(ctx context.Context, tasks []grading.Task) (map[string][]grading.Outcome, error) {
	out := map[string][]grading.Outcome{}
	for _, name := range m.names {
		j := m.judges[name]
		got := make([]grading.Outcome, len(tasks))
		keys := make([]string, len(tasks))
		var ask []grading.Task
		var at []int
		for i, t := range tasks {
			// The memory is keyed by the request, as the cache is: a
			// canary placed among the cases under another ID, or with
			// fields its prompt does not read, is the same call.
			key, err := j.RequestKey(t)
			if err != nil {
				return nil, fmt.Errorf("sub-grader %s: %s: %w", name, t.ID, err)
			}
			keys[i] = key
			m.mu.Lock()
			o, ok := m.memo[memoKey{name, key}]
			m.mu.Unlock()
			if ok && key != "" {
				got[i] = o
				continue
			}
			ask = append(ask, t)
			at = append(at, i)
		}
		if len(ask) > 0 {
			asked, err := j.Grade(ctx, ask)
			if err != nil {
				return nil, fmt.Errorf("sub-grader %s: %w", name, err)
			}
			m.mu.Lock()
			for k, i := range at {
				got[i] = asked[k]
				if keys[i] != "" {
					m.memo[memoKey{name, keys[i]}] = asked[k]
				}
			}
			m.mu.Unlock()
		}
		out[name] = got
	}
	return out, nil
}

// Usage is what the model sub-graders' calls cost, added up: the types
// and models are listed, sub-grader by sub-grader, when they differ.
func (m *Models) Usage() *results.JudgeUsage {
	if m == nil {
		return nil
	}
	var u results.JudgeUsage
	var types, models, endpoints, modes []string
	for _, name := range m.names {
		x := m.judges[name].Usage()
		types = appendNew(types, x.Type)
		models = appendNew(models, x.Model)
		endpoints = appendNew(endpoints, x.Endpoint)
		modes = appendNew(modes, x.CacheMode)
		u.Calls += x.Calls
		u.Retries += x.Retries
		u.Cached += x.Cached
		u.NotSent += x.NotSent
		u.NotSentIDs = appendNew(u.NotSentIDs, x.NotSentIDs...)
		u.Needed += x.Needed
		u.MaxCalls = x.MaxCalls
		u.InvalidReplies += x.InvalidReplies
		u.InvalidIDs = appendNew(u.InvalidIDs, x.InvalidIDs...)
		u.Tokens.Input += x.Tokens.Input
		u.Tokens.Output += x.Tokens.Output
		u.CachedTokens.Input += x.CachedTokens.Input
		u.CachedTokens.Output += x.CachedTokens.Output
		u.WallMS += x.WallMS
	}
	slices.Sort(u.NotSentIDs)
	slices.Sort(u.InvalidIDs)
	u.Type = strings.Join(types, "+")
	u.Model = strings.Join(models, ", ")
	u.Endpoint = strings.Join(endpoints, ", ")
	u.CacheMode = strings.Join(modes, ", ")
	return &u
}

func appendNew(list []string, vs ...string) []string {
	for _, v := range vs {
		if !slices.Contains(list, v) {
			list = append(list, v)
		}
	}
	return list
}

// judgedBy is a multi case's "judge" field: each model sub-grader's reply
// and what was read from it, by sub-grader name.
func judgedBy(replies map[string]json.RawMessage) json.RawMessage {
	if len(replies) == 0 {
		return nil
	}
	b, _ := json.Marshal(replies)
	return b
}
