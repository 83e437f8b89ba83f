package render

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

// A streamed run keeps only the rows a report shows; the reports count the
// rest and point at the results JSON.
func TestWorstCasesCountRowsNotKept(t *testing.T) {
	res := holdResult()
	shown := len(worstCases(res))
	res.CasesNotKept = 1000
	var human, md bytes.Buffer
	if err := Human(&human, res, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&md, res, MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	total := shown + 1000
	if want := "of " + strconv.Itoa(total) + ")"; !strings.Contains(human.String(), want) {
		t.Errorf("human output lacks %q:\n%s", want, human.String())
	}
	if want := "### Worst cases (" + strconv.Itoa(total) + ")"; !strings.Contains(md.String(), want) {
		t.Errorf("markdown lacks %q", want)
	}
	// No results file was written: the reports say how to get one.
	if !strings.Contains(human.String(), "more (write every row with --results FILE)") {
		t.Errorf("human output does not say how to get the rest:\n%s", human.String())
	}
	if !strings.Contains(md.String(), "more (write every row with --results FILE)") {
		t.Errorf("markdown does not say how to get the rest")
	}
	human.Reset()
	md.Reset()
	if err := Human(&human, res, Options{ResultsFile: "out/results.json"}); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&md, res, MarkdownOptions{ResultsFile: "out/results.json"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(human.String(), "more in out/results.json") || !strings.Contains(md.String(), "more in out/results.json") {
		t.Errorf("the reports do not point at the results file written:\n%s\n%s", human.String(), md.String())
	}
}
