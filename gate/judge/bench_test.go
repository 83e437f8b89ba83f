//go:build unix

package judge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/judge"
)

// benchTasks are n tasks with distinct prompts, so none shares a request.
func benchTasks(n int) []grading.Task {
	tasks := make([]grading.Task, n)
	for i := range tasks {
		sample, _ := json.Marshal(map[string]string{"output_text": fmt.Sprintf("GOOD answer number %d", i)})
		item, _ := json.Marshal(map[string]string{"question": "Refund time?", "reference": "5 days"})
		tasks[i] = grading.Task{ID: fmt.Sprintf("c%d", i), Sample: sample, Item: item}
	}
	return tasks
}

// cpuTime is this process's user and system CPU time so far. On a shared
// machine it moves far less with the load than wall time does.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCallsAgainstFake measures model calls per second against the
// httptest fake with the default concurrency (judge.DefaultConcurrency):
// the gate's own overhead per call, rendering, HTTP and parsing, with a
// model that answers at once.
func BenchmarkCallsAgainstFake(b *testing.B) {
	fake := newFake(b, agree)
	m, _, _ := suite(b, "")
	const batch = 200
	tasks := benchTasks(batch)
	j, err := judge.New(judge.Config{Grader: m.Grader, BaseURL: fake.url(), APIKey: testKey})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ResetTimer()
	cpu := cpuTime(b)
	for b.Loop() {
		if _, err := j.Grade(ctx, tasks); err != nil {
			b.Fatal(err)
		}
	}
	// The CPU time includes the fake's side of every call.
	b.ReportMetric(float64((cpuTime(b)-cpu).Microseconds())/float64(b.N*batch), "cpu-µs/call")
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "calls/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/call")
}

// BenchmarkCacheHit measures what a case costs when its call is replayed
// from the judge cache: rendering, hashing, reading and checking the file,
// parsing the reply.
func BenchmarkCacheHit(b *testing.B) {
	fake := newFake(b, agree)
	m, _, _ := suite(b, "")
	const batch = 200
	tasks := benchTasks(batch)
	cache := &judge.Cache{Dir: b.TempDir()}
	rec, _ := judge.New(judge.Config{Grader: m.Grader, BaseURL: fake.url(), APIKey: testKey, Cache: cache})
	if _, err := rec.Grade(context.Background(), tasks); err != nil {
		b.Fatal(err)
	}
	j, _ := judge.New(judge.Config{Grader: m.Grader, Cache: cache, CacheMode: judge.CacheRead})
	ctx := context.Background()
	b.ResetTimer()
	cpu := cpuTime(b)
	for b.Loop() {
		if _, err := j.Grade(ctx, tasks); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuTime(b)-cpu).Microseconds())/float64(b.N*batch), "cpu-µs/case")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/case")
	if u := j.Usage(); u.Calls != 0 {
		b.Fatalf("%d calls on the cache-hit path", u.Calls)
	}
}
