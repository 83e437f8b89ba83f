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
	if !strings.Contains(human.String(), "more in the results JSON") {
		t.Errorf("human output does not point at the results JSON")
	}
}
