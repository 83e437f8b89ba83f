package worker

import (
	"encoding/json"
	"math"
	"sort"

	"github.com/gradegate/gradegate/gate/grading"
)

// This file reads what worker.py answers under MKA1's contract
// (Config.MKA1) beyond a case's scores: a batch's aggregate metrics and
// the score keys MKA1's rules dropped.

// maxDropped bounds the dropped keys kept per result or batch: they are
// for a reader, and the worker is not trusted to keep the list short.
const maxDropped = 32

// batchReport is a valid batch response's metrics, or nil when the
// response carries none (OpenAI's contract). Go checks the values again:
// a metric that is not finite is dropped with a note, never kept.
func batchReport(r *response) *grading.BatchReport {
	if r.Metrics == nil && r.MetricsDropped == nil {
		return nil
	}
	rep := &grading.BatchReport{Metrics: map[string]float64{}, Cases: len(r.Results)}
	names := make([]string, 0, len(r.Metrics))
	for name := range r.Metrics {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		v := r.Metrics[name]
		if math.IsNaN(v) || math.IsInf(v, 0) {
			rep.Dropped = append(rep.Dropped, name+": not finite")
			continue
		}
		rep.Metrics[name] = v
	}
	rep.Dropped = append(rep.Dropped, r.MetricsDropped...)
	if len(rep.Dropped) > maxDropped {
		rep.Dropped = rep.Dropped[:maxDropped]
	}
	return rep
}

// extractedOutput is a result's replaced extracted_output when it is a
// JSON string or null, else nil.
func extractedOutput(r *response) json.RawMessage {
	var s *string
	if len(r.ExtractedOutput) == 0 || json.Unmarshal(r.ExtractedOutput, &s) != nil {
		return nil
	}
	return r.ExtractedOutput
}

// droppedScores is the bounded list of a result's dropped score keys.
func droppedScores(r *response) []string {
	if len(r.Dropped) > maxDropped {
		return r.Dropped[:maxDropped]
	}
	return r.Dropped
}
