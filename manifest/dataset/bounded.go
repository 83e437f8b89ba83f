package dataset

import (
	"fmt"

	"github.com/gradegate/gradegate/manifest"
)

// MaxListed is how many problems of one kind a file's report lists in full.
// The rest are counted in one more entry, so a million broken lines cost a
// counter, not a million messages held in memory and printed.
const MaxListed = 100

// problems is the input errors of one file: the first MaxListed, and how
// many more there were.
type problems struct {
	file string
	list []error
	more int
}

func (p *problems) add(err error) {
	if len(p.list) < MaxListed {
		p.list = append(p.list, err)
		return
	}
	p.more++
}

func (p *problems) any() bool { return len(p.list) > 0 }

// errs is the listed errors and, when some were not listed, the count.
func (p *problems) errs() []error {
	if p.more == 0 {
		return p.list
	}
	out := append([]error(nil), p.list...)
	return append(out, &manifest.Error{File: p.file,
		Msg: fmt.Sprintf("%d more problems like these are not listed (the first %d are)", p.more, MaxListed)})
}

// findingList is findings in the order they were found, at most MaxListed
// of one code; for each code with more, one finding of the same severity
// counts the rest.
type findingList struct {
	list  []manifest.Finding
	count map[string]int
	first map[string]manifest.Finding // the first of each code, for its severity and file
	order []string
}

func (l *findingList) add(fs ...manifest.Finding) {
	if l.count == nil {
		l.count, l.first = map[string]int{}, map[string]manifest.Finding{}
	}
	for _, f := range fs {
		l.count[f.Code]++
		if l.count[f.Code] == 1 {
			l.first[f.Code] = f
			l.order = append(l.order, f.Code)
		}
		if l.count[f.Code] <= MaxListed {
			l.list = append(l.list, f)
		}
	}
}

// all returns the listed findings and a counting one per code past the
// bound.
func (l *findingList) all() []manifest.Finding {
	out := l.list
	for _, code := range l.order {
		n := l.count[code]
		if n <= MaxListed {
			continue
		}
		f := l.first[code]
		out = append(out, manifest.Finding{Code: code, Severity: f.Severity, File: f.File,
			Message: fmt.Sprintf("%d more %s findings like these are not listed (the first %d are); every case they name is counted", n-MaxListed, code, MaxListed)})
	}
	return out
}
