package dataset

import (
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/gradegate/gradegate/manifest"
)

// BenchmarkReader reads a 100k-row dataset and its samples file once, as a
// run does (go test -run '^$' -bench Reader -benchmem ./manifest/dataset/).
func BenchmarkReader(b *testing.B) {
	const n = 100_000
	for _, order := range []string{"same order", "reversed samples"} {
		var cases, samples strings.Builder
		for i := range n {
			fmt.Fprintf(&cases, `{"item": {"case_id": "case-%07d", "expected_total_cents": %d, "slice": "refunds", "currency": "USD"}}`+"\n", i, i*7)
		}
		for k := range n {
			i := k
			if order != "same order" {
				i = n - 1 - k
			}
			fmt.Fprintf(&samples, `{"case_id": "case-%07d", "sample": {"output_text": "%d"}}`+"\n", i, i*7)
		}
		files := fstest.MapFS{"cases.jsonl": {Data: []byte(cases.String())}, "samples.jsonl": {Data: []byte(samples.String())}}
		m := testManifest(".")
		m.Samples = &manifest.FileRef{Path: "samples.jsonl"}
		m.Dataset.NearDuplicates.Fields = []string{"request"} // no such field: the screen stays idle
		b.Run(order, func(b *testing.B) {
			b.SetBytes(int64(len(cases.String()) + len(samples.String())))
			for b.Loop() {
				r := Open(files, m)
				rows := 0
				for {
					if _, ok := r.Next(); !ok {
						break
					}
					rows++
				}
				if _, err := r.Close(); err != nil || rows != n {
					b.Fatalf("%d rows, %v", rows, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/row")
		})
	}
}
