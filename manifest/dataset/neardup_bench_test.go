//go:build unix

package dataset

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gradegate/gradegate/manifest"
)

// templatedSuite writes n dataset rows shaped like a real export: a short
// shared currency and status, a conversation whose system prompt every row
// shares, and a long templated request (a fixed opening and closing around
// 60 words of its own). One row in 100 is planted as a near duplicate of
// the row before it, in turn: the same text in other case and spacing (an
// exact duplicate), the last of its own words changed, a word in the middle
// changed (similarity 0.87 for both), or a third member of the cluster
// planted before, another word changed. It returns the clusters planted and
// their rows.
func templatedSuite(w io.Writer, n int, seed uint64) (clusters, rows int) {
	r := rand.New(rand.NewPCG(seed, 1))
	syll := strings.Fields("ka lo mi ne ro su ta ve bi do fa gu he ji ku la mo ni pa qu ri se ti vo wa xe yo za")
	vocab := make([]string, 4000)
	for i := range vocab {
		var b strings.Builder
		for range 2 + r.IntN(2) {
			b.WriteString(syll[r.IntN(len(syll))])
		}
		vocab[i] = fmt.Sprintf("%s%d", b.String(), i)
	}
	const system = "You are the support agent of an online shop. Answer the customer's question about orders, parcels and refunds politely, cite the policy that applies, and never promise a date the tracking page does not show."
	bw := bufio.NewWriterSize(w, 1<<20)
	defer bw.Flush()
	var (
		prev      []string // the last row's own words and order number
		prevOrder int
		lastPlant []string // the source of the last planted cluster
		lastOrder int
	)
	for i := range n {
		words := make([]string, 60)
		for k := range words {
			words[k] = vocab[r.IntN(len(vocab))]
		}
		order := 10000 + r.IntN(90000)
		if i%100 == 99 {
			kind := (i / 100) % 4
			src, srcOrder := prev, prevOrder
			if kind == 3 {
				src, srcOrder = lastPlant, lastOrder
			}
			copy(words, src)
			order = srcOrder
			switch kind {
			case 0: // other case and spacing only
				for k := range words {
					if k%3 == 0 {
						words[k] = strings.ToUpper(words[k]) + " "
					}
				}
			case 1:
				words[len(words)-1] = vocab[r.IntN(len(vocab))]
			case 2:
				words[len(words)/2] = vocab[r.IntN(len(vocab))]
			case 3:
				words[len(words)-2] = vocab[r.IntN(len(vocab))]
			}
			if kind == 3 {
				rows++
			} else {
				clusters++
				rows += 2
				lastPlant, lastOrder = src, srcOrder
			}
		}
		prev, prevOrder = words, order
		request := "Hello, I am writing about my order. " + strings.Join(words, " ") + " Thank you in advance for your help with this."
		user := fmt.Sprintf("Order %d: where is it now?", order)
		item := map[string]any{
			"case_id":     fmt.Sprintf("case-%07d", i+1),
			"slice":       fmt.Sprintf("s%d", i%7),
			"currency":    "USD",
			"status":      "approved",
			"human_score": i % 2,
			"request":     request,
			"messages":    []map[string]string{{"role": "system", "content": system}, {"role": "user", "content": user}},
		}
		line, _ := json.Marshal(map[string]any{"item": item})
		bw.Write(line)
		bw.WriteByte('\n')
	}
	return clusters, rows
}

// screenFile feeds every row of a dataset file to a new screen and returns
// its findings.
func screenFile(tb testing.TB, dir, name string, m *manifest.Manifest) []manifest.Finding {
	tb.Helper()
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	s := NewScreen(ScreenConfig{Manifest: m, FS: os.DirFS(dir), File: name})
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for n := 1; sc.Scan(); n++ {
		item := objectField(sc.Bytes(), "item")
		id := ""
		if raw := objectField(item, "case_id"); len(raw) > 1 {
			id = string(raw[1 : len(raw)-1])
		}
		s.Add(n, id, item)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	out, err := s.Findings()
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// clustersFound counts the clusters and their rows in near_duplicate
// findings, listed or counted.
func clustersFound(tb testing.TB, fs []manifest.Finding) (clusters, rows int) {
	for _, f := range fs {
		if f.Code != CodeNearDuplicate {
			continue
		}
		var c, n int
		if _, err := fmt.Sscanf(f.Message, "%d more clusters of near duplicates (%d cases)", &c, &n); err == nil {
			clusters += c
			rows += n
			continue
		}
		if _, err := fmt.Sscanf(f.Message, "%d cases", &n); err != nil {
			tb.Fatalf("finding %q: %v", f.Message, err)
		}
		clusters++
		rows += n
	}
	return clusters, rows
}

// TestScreenPlanted checks the screen on a templated 20k-row suite: it
// finds the planted clusters and nothing else, and the memory it keeps
// stays linear in the rows with a small constant, where a list of
// candidate pairs would not.
func TestScreenPlanted(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 20k-row suite")
	}
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "cases.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	const n = 20000
	wantClusters, wantRows := templatedSuite(f, n, 1)
	f.Close()

	m := testManifest(".")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	findings := screenFile(t, dir, "cases.jsonl", m)
	runtime.ReadMemStats(&after)

	gotClusters, gotRows := clustersFound(t, findings)
	// Banding finds a pair at similarity 0.87 with probability 0.997: all
	// planted clusters are expected, and nothing that was not planted.
	if gotClusters != wantClusters || gotRows != wantRows {
		t.Errorf("found %d clusters of %d rows, planted %d of %d", gotClusters, gotRows, wantClusters, wantRows)
	}
	// Everything the screen allocates, over the whole run: the rows kept
	// (64 bytes and the case id each), the sort buffers and the candidates'
	// shingles. Comparing every pair would take 200M pair checks; a pair
	// list, gigabytes.
	const perRow = 1024
	t.Logf("allocated %d bytes, %d a row", after.TotalAlloc-before.TotalAlloc, (after.TotalAlloc-before.TotalAlloc)/n)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > n*perRow {
		t.Errorf("screen allocated %d bytes for %d rows, over %d bytes a row", alloc, n, perRow)
	}
}

// TestScreenNoPairList: 3,000 rows with the same text and 3,000 that
// differ only in their last word are 9M similar pairs; the screen joins
// them into two clusters without listing the pairs.
func TestScreenNoPairList(t *testing.T) {
	var b strings.Builder
	const n = 3000
	for i := range n {
		fmt.Fprintf(&b, `{"item": {"case_id": "same-%d", "currency": "USD", "request": "one and the same long request text for every row of this block"}}`+"\n", i)
	}
	for i := range n {
		fmt.Fprintf(&b, `{"item": {"case_id": "near-%d", "currency": "USD", "request": "a templated request whose words are the same up to the very last one which is w%d"}}`+"\n", i, i)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "cases.jsonl"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	m := testManifest(".")
	m.Dataset.NearDuplicates.Fields = []string{"request", "currency"}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	findings := screenFile(t, dir, "cases.jsonl", m)
	runtime.ReadMemStats(&after)
	if c, rows := clustersFound(t, findings); c != 2 || rows != 2*n {
		t.Errorf("found %d clusters of %d rows, want 2 of %d: %v", c, rows, 2*n, findings)
	}
	const perRow = 1024
	t.Logf("allocated %d bytes, %d a row", after.TotalAlloc-before.TotalAlloc, (after.TotalAlloc-before.TotalAlloc)/(2*n))
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 2*n*perRow {
		t.Errorf("screen allocated %d bytes for %d rows, over %d bytes a row", alloc, 2*n, perRow)
	}
}

// cpuTime is the CPU time this process has used, user and system: on a
// shared machine it says more than the wall clock.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// heapPeak samples the live heap every few milliseconds until stop.
func heapPeak() (stop func() uint64) {
	samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var (
		mu   sync.Mutex
		peak uint64
		done = make(chan struct{})
		wg   sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(samples)
			mu.Lock()
			peak = max(peak, samples[0].Value.Uint64())
			mu.Unlock()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		wg.Wait()
		return peak
	}
}

// BenchmarkScreen runs the screen over templated suites of 20k, 100k and 1M
// rows written to a temporary folder (the 1M one is 1.1 GB; skip it
// with -bench 'Screen/rows=(20k|100k)'), reporting rows per second and the
// peak live heap of the whole run, reading the file included.
//
//	go test ./manifest/dataset/ -run '^$' -bench Screen -benchtime 1x
func BenchmarkScreen(b *testing.B) {
	for _, size := range []struct {
		name string
		n    int
	}{{"20k", 20000}, {"100k", 100000}, {"1M", 1000000}} {
		b.Run("rows="+size.name, func(b *testing.B) {
			dir := b.TempDir()
			f, err := os.Create(filepath.Join(dir, "cases.jsonl"))
			if err != nil {
				b.Fatal(err)
			}
			wantClusters, wantRows := templatedSuite(f, size.n, 1)
			f.Close()
			m := testManifest(".")
			for b.Loop() {
				runtime.GC()
				var base runtime.MemStats
				runtime.ReadMemStats(&base)
				stop := heapPeak()
				start, cpu0 := time.Now(), cpuTime()
				findings := screenFile(b, dir, "cases.jsonl", m)
				elapsed, cpu := time.Since(start), cpuTime()-cpu0
				peak := stop()
				c, rows := clustersFound(b, findings)
				b.ReportMetric(float64(size.n)/elapsed.Seconds(), "rows/s")
				b.ReportMetric(cpu.Seconds(), "cpu-s")
				b.ReportMetric(float64(peak-min(peak, base.HeapAlloc))/(1<<20), "peak-MiB")
				b.ReportMetric(float64(c), "clusters")
				b.ReportMetric(float64(wantClusters), "planted")
				if c != wantClusters || rows != wantRows {
					b.Logf("found %d clusters of %d rows, planted %d of %d", c, rows, wantClusters, wantRows)
				}
			}
		})
	}
}

// BenchmarkSortKeys sorts a million band keys, as the screen's end phase
// does twelve times.
func BenchmarkSortKeys(b *testing.B) {
	const n = 1 << 20
	r := rand.New(rand.NewPCG(1, 2))
	band := make([]uint32, n)
	for i := range band {
		band[i] = r.Uint32()
	}
	keys, count := make([]uint64, n), make([]int, 1<<16)
	for b.Loop() {
		sortKeys(keys, count, n, func(i int) (uint64, bool) { return uint64(band[i])<<32 | uint64(i), true })
	}
}
