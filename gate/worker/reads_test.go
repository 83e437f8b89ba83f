//go:build linux

package worker

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/gradegate/gradegate/gate/grading"
)

// TestRecordReads: a task that asks gets the item keys its grade read, in
// the order first read, whether the grade returned or raised, under both
// isolations; a task that does not ask gets none, and its item is a plain
// dict. A task that asks is answered with the plain dict too: the reads
// come from a second call, which must agree.
func TestRecordReads(t *testing.T) {
	src := "def grade(sample, item):\n" +
		"    if sample.get('type'):\n" +
		"        return 1.0 if type(item) is dict else 0.0\n" +
		"    a = item['a']\n" +
		"    b = item.get('b')\n" +
		"    if 'c' in item:\n" +
		"        pass\n" +
		"    x = item['a']\n" +
		"    if sample.get('raise'):\n" +
		"        return item['missing']\n" +
		"    if sample.get('all'):\n" +
		"        return float(len(list(item.items())))\n" +
		"    return 1.0\n"
	item := json.RawMessage(`{"c": 3, "b": 2, "a": 1, "d": 4}`)
	mk := func(sample string, record bool) grading.Task {
		return grading.Task{ID: "t", Sample: json.RawMessage(sample), Item: item, RecordReads: record}
	}
	tests := []struct {
		name  string
		task  grading.Task
		class grading.Class
		reads []string
	}{
		{"returns", mk(`{}`, true), grading.ClassOK, []string{"a", "b", "c"}},
		{"raises", mk(`{"raise": 1}`, true), grading.ClassGraderException, []string{"a", "b", "c"}},
		{"reads everything", mk(`{"all": 1}`, true), grading.ClassOK, []string{"a", "b", "c", "d"}},
		{"not asked", mk(`{}`, false), grading.ClassOK, nil},
		{"a case's item is a plain dict", mk(`{"type": 1}`, false), grading.ClassOK, nil},
		// The counted answer is the plain dict's; a grader that answers
		// the recording item otherwise is told it tells them apart.
		{"a grader that tells a recording item", mk(`{"type": 1}`, true), grading.ClassInvalidReturn, nil},
	}
	for _, isolation := range []string{IsolationWorker, IsolationCase} {
		p := newPool(t, python(t), src, func(c *Config) { c.Isolation = isolation })
		var tasks []grading.Task
		for _, tt := range tests {
			tasks = append(tasks, tt.task)
		}
		got, err := p.Grade(context.Background(), tasks)
		if err != nil {
			t.Fatal(err)
		}
		for i, tt := range tests {
			o := got[i]
			if o.Class != tt.class {
				t.Errorf("%s/%s: class %s (%v), want %s", isolation, tt.name, o.Class, o.Error, tt.class)
			}
			if !slices.Equal(o.Reads, tt.reads) {
				t.Errorf("%s/%s: reads %q, want %q", isolation, tt.name, o.Reads, tt.reads)
			}
			if tt.name == "a case's item is a plain dict" && (o.Score == nil || *o.Score != 1) {
				t.Errorf("%s: a case's item was not a plain dict", isolation)
			}
			if tt.class == grading.ClassInvalidReturn && (o.Error == nil || !strings.Contains(o.Error.Message, "tells such an item from a case's")) {
				t.Errorf("%s/%s: error %v, want it to say the grader tells the items apart", isolation, tt.name, o.Error)
			}
		}
	}
}
