package gate

import (
	"context"
	"fmt"
	"strings"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/manifest"
)

// traceCanaries grades every failed canary that returned a score once more,
// traced (grading.Task.Trace), and names in its result the grader line whose return
// produced the score, with the lint finding on that line. Of the derived
// canaries (gate.metamorphic) only the first violation of each transform is
// traced, the example its reason shows; derived gives their tasks (nil: none).
// The replay comes after the canary was judged blind among the cases, so a
// grader that notices the hook cannot change the verdict; a replay that
// scores differently is left unexplained. Under the batch contract nothing
// is traced: grade_batch scores many samples in one return.
func traceCanaries(ctx context.Context, m *manifest.Manifest, r grading.Runner, canaries []results.CanaryResult, findings []manifest.Finding, derived func(name string) (grading.Task, bool)) error {
	if m.Grader.Contract == "batch" || m.Grader.Judge != nil {
		return nil
	}
	byName := make(map[string]manifest.Canary, len(m.Canaries))
	for _, c := range m.Canaries {
		byName[c.Name] = c
	}
	tracedTransform := map[string]bool{}
	for i := range canaries {
		cr := &canaries[i]
		if cr.Status == results.StatusPass {
			continue
		}
		var task grading.Task
		if cr.DerivedFrom != "" {
			// The report's first example of a transform is its first
			// violation in this order, ok or not.
			first := !tracedTransform[cr.Transform]
			tracedTransform[cr.Transform] = true
			t, ok := grading.Task{}, false
			if derived != nil && first {
				t, ok = derived(cr.Name)
			}
			if !ok {
				continue
			}
			task = t
		} else {
			c, ok := byName[cr.Name]
			if !ok {
				continue
			}
			task = grading.Task{ID: c.Name, Sample: c.Sample, Item: c.Item}
		}
		if cr.Class != grading.ClassOK || cr.Got == nil {
			continue
		}
		task.Trace, task.RecordReads = true, false
		o, err := grading.GradeTasks(ctx, r, []grading.Task{task})
		if err != nil {
			return fmt.Errorf("tracing canary %s: %w", cr.Name, err)
		}
		if o[0].Class != grading.ClassOK || o[0].Score == nil || *o[0].Score != *cr.Got || o[0].ReturnLine <= 0 {
			continue
		}
		cr.ReturnLine = o[0].ReturnLine
		cr.Message += "; " + returnedAt(m.Grader.Source, cr.ReturnLine, findings)
	}
	return nil
}

// returnedAt says which grader line returned a canary's score and which
// lint findings point at it: one on that line, or a handler whose return it
// is (broad_except_constant names its return's line).
func returnedAt(source string, line int, findings []manifest.Finding) string {
	s := fmt.Sprintf("%s line %d returned it", source, line)
	var codes []string
	ret := fmt.Sprintf("(line %d)", line)
	for _, f := range findings {
		if f.File != "" && !strings.HasSuffix(f.File, source) {
			continue
		}
		if f.Line == line || (f.Code == "broad_except_constant" && strings.Contains(f.Message, ret)) {
			codes = append(codes, f.Code)
		}
	}
	if len(codes) > 0 {
		s += " (lint: " + strings.Join(codes, ", ") + ")"
	}
	return s
}
