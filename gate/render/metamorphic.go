package render

import (
	"fmt"
	"strconv"

	"github.com/gradegate/gradegate/gate/results"
)

// metamorphicLine says in one line what the derived canaries covered, or
// that they were switched off and where.
func metamorphicLine(m *results.MetamorphicReport) string {
	if !m.Enabled {
		where := ""
		if m.DisabledLine > 0 {
			where = fmt.Sprintf(", line %d", m.DisabledLine)
		}
		return fmt.Sprintf("derived canaries: off (gate.metamorphic.enabled: false%s): no variant of any canary or labeled case was graded", where)
	}
	return fmt.Sprintf("derived canaries: %s of %s, %s",
		plural(m.Variants, "variant", "variants"), plural(m.Bases, "base", "bases"),
		plural(m.Violations, "broke its relation", "broke their relation"))
}

// offLines are the transforms switched off, each with its reason.
func offLines(m *results.MetamorphicReport) []string {
	var out []string
	for _, o := range m.Off {
		out = append(out, fmt.Sprintf("transform %s off (line %d): %s", o.Name, o.Line, o.Reason))
	}
	return out
}

// firstExample is a transform's first violation in one cell.
func firstExample(t results.MetamorphicTransform) string {
	f := t.First
	if f == nil {
		return ""
	}
	s := fmt.Sprintf("from %s: %q → %s", f.DerivedFrom, f.Variant, f.Message)
	if f.Error != nil && f.Error.Line > 0 {
		s += fmt.Sprintf(" (grader line %d)", f.Error.Line)
	}
	return s
}

func humanMetamorphic(ew *errWriter, res *results.Results, p palette) error {
	m := res.Metamorphic
	if m == nil {
		return nil
	}
	ew.printf("\n%s\n", p.title.Sprint(oneLine(metamorphicLine(m))))
	for _, l := range offLines(m) {
		ew.printf("  %s\n", oneLine(l))
	}
	var rows [][]string
	for _, t := range m.Transforms {
		if t.Violations == 0 {
			continue
		}
		rows = append(rows, []string{t.Name, t.Relation, strconv.Itoa(t.Variants), strconv.Itoa(t.Violations),
			cut(oneLine(firstExample(t)), humanCellRunes*2)})
	}
	if len(rows) == 0 {
		return nil
	}
	tb := newTable(ew, []string{"transform", "relation", "variants", "violations", "first"},
		[]align{left, left, right, right, left})
	return renderTable(tb, rows)
}

func markdownMetamorphic(m *results.MetamorphicReport) mdSection {
	head := "\n### Derived canaries\n\n" + md(metamorphicLine(m)) + "\n"
	for _, l := range offLines(m) {
		head += "\n- " + md(l)
	}
	s := mdSection{head: head, keepHead: true, what: "derived canary rows"}
	first := true
	for _, t := range m.Transforms {
		if t.Violations == 0 {
			continue
		}
		if first {
			s.head += "\n" + tableHead("transform", "relation", ">variants", ">violations", "first")
			first = false
		}
		s.rows = append(s.rows, mdRow{tableRow(code(t.Name), t.Relation, strconv.Itoa(t.Variants), strconv.Itoa(t.Violations),
			cell(firstExample(t), markdownCellRunes)), rankCanaryFail})
	}
	return s
}
