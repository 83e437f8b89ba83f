package checkrun

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/go-github/v62/github"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/render"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/manifest"
)

// Annotation levels, as the Checks API names them.
const (
	LevelFailure = "failure"
	LevelWarning = "warning"
	LevelNotice  = "notice"
)

// Annotation points at one line of a file in the repository.
type Annotation struct {
	Path    string // relative to the repository root, with forward slashes
	Line    int    // 1-based
	Level   string // LevelFailure, LevelWarning or LevelNotice
	Title   string
	Message string
}

// maxCaseIDsListed bounds the case_ids named in one grouped annotation.
const maxCaseIDsListed = 5

// Annotations returns what the check run annotates, at most the configured
// maximum, causes first:
//   - findings that have a file and a line;
//   - the manifest line of every canary that failed;
//   - grader source lines where cases or failed canaries raised, one
//     annotation per line naming the cases;
//   - dataset lines of the cases the grading got wrong or could not judge:
//     an unevaluable case, a false pass (graded pass, labelled 0), a false
//     fail (graded fail, labelled 1), and a failing case of a mandatory
//     slice that has no label or a positive one. A correct fail (labelled
//     0 and graded fail) is the grader doing its job and is not annotated.
//
// Paths that cannot be made relative to the repository are left out.
// The caller uses the same list for workflow commands when the token may not
// write checks.
func (c *Check) Annotations(res *results.Results) []Annotation {
	// A pass can carry tolerated errors; they are worth a look, not a failure.
	level := LevelFailure
	if res.Verdict == results.VerdictPass {
		level = LevelWarning
	}
	var out []Annotation
	add := func(file string, a Annotation) {
		if file == "" || a.Line < 1 {
			return
		}
		rel, ok := c.paths(file)
		if !ok {
			return
		}
		a.Path = rel
		a.Title = cut(render.Clip(a.Title, maxTitleBytes), maxTitleBytes, "…")
		a.Message = cut(render.Lines(a.Message, render.LineRunes*8), maxMessageBytes, "…")
		out = append(out, a)
	}

	for _, f := range res.Findings {
		l := LevelFailure
		if f.Severity != manifest.SeverityHold {
			l = LevelWarning
		}
		title := f.Code
		if f.CaseID != "" {
			title += " (" + f.CaseID + ")"
		}
		add(f.File, Annotation{Line: f.Line, Level: l, Title: title, Message: f.Message})
	}

	for _, cn := range res.Canaries {
		if cn.Status == results.StatusPass {
			continue
		}
		msg := cn.Message
		if cn.Error != nil {
			msg = strings.TrimSpace(msg + "\n" + errorText(cn.Error))
		}
		add(cn.File, Annotation{Line: cn.Line, Level: LevelFailure, Title: "canary " + cn.Name + " failed", Message: msg})
	}

	for _, g := range graderRaises(res) {
		add(c.files.Grader, Annotation{Line: g.line, Level: level, Title: g.title(), Message: g.message()})
	}

	mandatory := map[string]bool{}
	for _, s := range res.Slices {
		if s.Mandatory {
			mandatory[s.Name] = true
		}
	}
	for _, cs := range res.Cases {
		if title := caseTitle(cs, mandatory); title != "" {
			add(c.files.Dataset, Annotation{Line: cs.Line, Level: level, Title: title, Message: caseMessage(cs)})
		}
	}

	if c.maxAnnotations >= 0 && len(out) > c.maxAnnotations {
		out = out[:c.maxAnnotations]
	}
	return out
}

// raise is one grader source line where something raised.
type raise struct {
	line     int
	types    []string // exception types seen, in order
	messages []string // first message per type
	cases    []string
	canaries []string
}

func (r *raise) title() string {
	n := len(r.cases) + len(r.canaries)
	what := "1 case"
	switch {
	case len(r.cases) == 0 && len(r.canaries) == 1:
		what = "canary " + r.canaries[0]
	case n > 1:
		what = fmt.Sprintf("%d cases and canaries", n)
		if len(r.canaries) == 0 {
			what = fmt.Sprintf("%d cases", n)
		}
	}
	return fmt.Sprintf("grader raised %s here (%s)", strings.Join(r.types, ", "), what)
}

func (r *raise) message() string {
	var b strings.Builder
	b.WriteString(strings.Join(r.messages, "\n"))
	if len(r.canaries) > 0 {
		fmt.Fprintf(&b, "\ncanaries: %s", strings.Join(r.canaries, ", "))
	}
	if len(r.cases) > 0 {
		listed := r.cases[:min(len(r.cases), maxCaseIDsListed)]
		fmt.Fprintf(&b, "\ncases: %s", strings.Join(listed, ", "))
		if more := len(r.cases) - len(listed); more > 0 {
			fmt.Fprintf(&b, " and %d more", more)
		}
	}
	return b.String()
}

// graderRaises groups the cases and failed canaries that raised by grader
// line, so one bad line gives one annotation, not one per case.
func graderRaises(res *results.Results) []*raise {
	byLine := map[int]*raise{}
	var order []int
	note := func(e *grading.CaseError) *raise {
		if e == nil || e.Line < 1 {
			return nil
		}
		r := byLine[e.Line]
		if r == nil {
			r = &raise{line: e.Line}
			byLine[e.Line] = r
			order = append(order, e.Line)
		}
		typ := e.Type
		if typ == "" {
			typ = string(e.Class)
		}
		if !slices.Contains(r.types, typ) {
			r.types = append(r.types, typ)
			r.messages = append(r.messages, errorText(e))
		}
		return r
	}
	for _, cn := range res.Canaries {
		// A canary that was meant to raise and did is working as intended.
		if cn.Status == results.StatusPass {
			continue
		}
		if r := note(cn.Error); r != nil {
			r.canaries = append(r.canaries, cn.Name)
		}
	}
	for _, cs := range res.Cases {
		if r := note(cs.Error); r != nil {
			r.cases = append(r.cases, cs.CaseID)
		}
	}
	out := make([]*raise, 0, len(order))
	for _, l := range order {
		out = append(out, byLine[l])
	}
	return out
}

func errorText(e *grading.CaseError) string {
	switch {
	case e.Type != "" && e.Message != "":
		return e.Type + ": " + e.Message
	case e.Type != "":
		return e.Type
	case e.Message != "":
		return string(e.Class) + ": " + e.Message
	}
	return string(e.Class)
}

// caseTitle says why a case's dataset line is annotated, or "" when it is
// not: the grading got it wrong (a false pass or fail), could not judge it,
// or failed it in a mandatory slice with nothing saying the fail is right.
func caseTitle(cs results.CaseResult, mandatory map[string]bool) string {
	var in []string
	for _, s := range cs.Slices {
		if mandatory[s] {
			in = append(in, s)
		}
	}
	where := ""
	if len(in) > 0 {
		where = " in mandatory slice " + strings.Join(in, ", ")
	}
	label := -1
	if cs.HumanScore != nil {
		label = *cs.HumanScore
	}
	switch {
	case cs.Status == results.StatusError:
		return fmt.Sprintf("case %s could not be graded%s", cs.CaseID, where)
	case cs.Status == results.StatusPass && label == 0:
		return fmt.Sprintf("false pass: case %s is labelled 0 but passed%s", cs.CaseID, where)
	case cs.Status == results.StatusFail && label == 1:
		return fmt.Sprintf("false fail: case %s is labelled 1 but failed%s", cs.CaseID, where)
	case cs.Status == results.StatusFail && label != 0 && len(in) > 0:
		return fmt.Sprintf("case %s failed%s", cs.CaseID, where)
	}
	return ""
}

func caseMessage(cs results.CaseResult) string {
	if cs.Error != nil {
		return fmt.Sprintf("unevaluable (%s): %s", cs.Error.Class, errorText(cs.Error))
	}
	if cs.Score != nil {
		return fmt.Sprintf("score %g is below the pass threshold", *cs.Score)
	}
	return "the case did not pass"
}

func apiAnnotations(as []Annotation) []*github.CheckRunAnnotation {
	out := make([]*github.CheckRunAnnotation, len(as))
	for i, a := range as {
		out[i] = &github.CheckRunAnnotation{
			Path:            github.String(a.Path),
			StartLine:       github.Int(a.Line),
			EndLine:         github.Int(a.Line),
			AnnotationLevel: github.String(a.Level),
			Title:           github.String(a.Title),
			Message:         github.String(a.Message),
		}
	}
	return out
}

// RelativeTo returns a path mapper for WithPaths: a relative path is taken
// from workdir (gradegate's working directory), and the result is made
// relative to root (GITHUB_WORKSPACE, the repository root). Paths that end up
// outside root are refused.
func RelativeTo(root, workdir string) func(string) (string, bool) {
	return func(p string) (string, bool) {
		if !filepath.IsAbs(p) {
			p = filepath.Join(workdir, p)
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return "", false
		}
		return cleanRelative(rel)
	}
}

// cleanRelative accepts a path already relative to the repository root.
func cleanRelative(p string) (string, bool) {
	if p == "" || filepath.IsAbs(p) {
		return "", false
	}
	p = filepath.ToSlash(filepath.Clean(p))
	if p == "." || p == ".." || strings.HasPrefix(p, "../") {
		return "", false
	}
	return p, true
}
