package dataset

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"

	"github.com/gradegate/gradegate/manifest"
)

// Label finding codes.
const (
	// CodeStaleLabel: a labeled row whose rubric version is not
	// rubric.version; a warning, and under
	// gate.calibration.current_labels_only the label is left out of
	// calibration.
	CodeStaleLabel = "stale_label"
	// CodeLabelWithoutReason: under gate.calibration.require_reasons, a
	// label (adjudicated or a reviewer's) without a reason of at least
	// manifest.MinReasonWords words; a hold.
	CodeLabelWithoutReason = "label_without_reason"
	// CodeNearDuplicateLabelConflict: a cluster of near duplicates whose
	// rows carry different labels without different stated reasons; a hold
	// under gate.require_controls, a warning otherwise.
	CodeNearDuplicateLabelConflict = "near_duplicate_label_conflict"
)

// ReviewerLabel is one reviewer's independent label of a row.
type ReviewerLabel struct {
	Reviewer string `json:"reviewer"`
	Score    int    `json:"score"`
	Reason   string `json:"reason,omitempty"`
}

// Disagree reports whether the reviewers gave different scores.
func Disagree(labels []ReviewerLabel) bool {
	for _, l := range labels[min(1, len(labels)):] {
		if l.Score != labels[0].Score {
			return true
		}
	}
	return false
}

// LabelSummary is what the labels of a whole dataset showed: reviewer
// agreement per slice, and the rows whose labels do not gate or are in
// doubt, each group counted with its first cases. Its size grows with the
// slices and the statuses, never with the rows.
type LabelSummary struct {
	// Agreement is the reviewers' agreement of each slice with reviewer
	// labels (the rows of no slice under ""); rows whose labels do not
	// gate (warn-only status, a stale label left out) are not in it.
	Agreement map[string]*Agreement
	// Overall is the agreement over every such row.
	Overall Agreement
	// Brittle lists the rows whose reviewers disagreed.
	Brittle CaseList
	// WarnOnly lists the rows of each warn-only label status.
	WarnOnly map[string]*CaseList
	// Stale lists the labeled rows of another rubric version; Excluded
	// says they were left out of calibration (current_labels_only).
	Stale    CaseList
	Excluded bool
	// Candidates counts the samples by the model their objects name.
	Candidates CandidateModels

	file string // the dataset file, where Findings point
}

// Agreement is the two-by-two table of reviewer label pairs of a set of
// rows: every pair of reviewers of a row counts once, the first of the two
// as written giving the row of Table and the second its column (0: fail,
// 1: pass). Two reviewers per row make it Cohen's table.
type Agreement struct {
	Rows  int       `json:"rows"`  // rows with two reviewer labels or more
	Table [2][2]int `json:"table"` // [first][second]
}

// Pairs is the number of label pairs.
func (a *Agreement) Pairs() int { return a.Table[0][0] + a.Table[0][1] + a.Table[1][0] + a.Table[1][1] }

func (a *Agreement) add(labels []ReviewerLabel) {
	if len(labels) < 2 {
		return
	}
	a.Rows++
	for i := range labels {
		for j := i + 1; j < len(labels); j++ {
			a.Table[labels[i].Score][labels[j].Score]++
		}
	}
}

// maxCaseList is how many cases a CaseList names; Count stays exact.
const maxCaseList = 100

// CaseList counts the rows of a group and names the first maxCaseList.
type CaseList struct {
	Count int         `json:"count"`
	Cases []LabelCase `json:"cases"`
}

// LabelCase is one row of a CaseList.
type LabelCase struct {
	CaseID string `json:"case_id"`
	Line   int    `json:"line"`
	// Detail says what puts the row in the group (the reviewers' scores,
	// the rubric version, the status).
	Detail string `json:"detail,omitempty"`
}

func (l *CaseList) add(c LabelCase) {
	l.Count++
	if len(l.Cases) < maxCaseList {
		l.Cases = append(l.Cases, c)
	}
}

// labelFold reads and folds the label fields of each row.
type labelFold struct {
	sum    LabelSummary
	rubric string // rubric.version; "" when the manifest has none
	cal    manifest.Calibration
	seed   maphash.Seed
}

func newLabelFold(m *manifest.Manifest, file string) *labelFold {
	f := &labelFold{cal: m.Gate.Calibration, seed: maphash.MakeSeed()}
	if m.Rubric != nil {
		f.rubric = m.Rubric.Version
	}
	f.sum.Agreement = map[string]*Agreement{}
	f.sum.WarnOnly = map[string]*CaseList{}
	f.sum.Excluded = f.cal.CurrentLabelsOnly
	f.sum.file = file
	return f
}

// readLabels fills the row's rubric version, label status and reviewer
// labels, takes the reviewers' score as the label when they agree and no
// adjudicated label is given, and records the row's label findings.
func (r *Reader) readLabels(st *parseState, rw *caseRow, add func(code, msg string)) {
	f := r.fields
	if raw, ok := rw.field(f.RubricVersion); ok && !isNull(raw) {
		if v, isStr := st.names.intern(raw); isStr {
			rw.RubricVersion = v
		} else {
			add(CodeSchemaViolation, fmt.Sprintf("item.%s must be a string, not %s", f.RubricVersion, jsonKind(raw)))
		}
	}
	if raw, ok := rw.field(f.LabelStatus); ok && !isNull(raw) {
		if v, isStr := st.names.intern(raw); isStr {
			rw.LabelStatus = v
		} else {
			add(CodeSchemaViolation, fmt.Sprintf("item.%s must be a string, not %s", f.LabelStatus, jsonKind(raw)))
		}
	}
	if raw, ok := rw.field(f.ReviewerLabels); ok && !isNull(raw) {
		labels, msg := reviewerLabels(raw)
		if msg != "" {
			add(CodeLabelDomain, fmt.Sprintf("item.%s %s; the reviewer labels are ignored", f.ReviewerLabels, msg))
		} else {
			rw.Reviewers = labels
		}
	}
	if rw.Label == nil && len(rw.Reviewers) > 0 && !Disagree(rw.Reviewers) {
		score := rw.Reviewers[0].Score
		rw.Label = &score
		rw.labelFromReviewers = true
	}
	if raw, ok := rw.field(f.Reason); ok && len(raw) >= 2 && raw[0] == '"' {
		rw.reasonRaw = raw
	}
	labeled := rw.Label != nil || len(rw.Reviewers) > 0
	if labeled && r.labels.rubric != "" && rw.RubricVersion != "" && rw.RubricVersion != r.labels.rubric {
		rw.StaleLabel = true
		msg := fmt.Sprintf("labeled under rubric %s, not rubric.version %s", quoteValue(rw.RubricVersion), quoteValue(r.labels.rubric))
		if r.labels.cal.CurrentLabelsOnly {
			msg += "; left out of calibration (gate.calibration.current_labels_only)"
		} else {
			msg += "; it calibrates like a current label (gate.calibration.current_labels_only leaves it out)"
		}
		rw.findings = append(rw.findings, manifest.Finding{Code: CodeStaleLabel, Severity: manifest.SeverityWarn,
			File: rw.File, Line: rw.Line, CaseID: rw.ID, Message: msg})
	}
	if labeled && r.labels.cal.RequireReasons {
		if missing := r.reasonless(rw); missing != "" {
			add(CodeLabelWithoutReason, missing)
		}
	}
}

// reasonless says which of the row's labels lack a reason of
// manifest.MinReasonWords words; "" when none does.
func (r *Reader) reasonless(rw *caseRow) string {
	var missing []string
	reason, _ := stringValue(rw.reasonRaw)
	reason = strings.TrimSpace(reason)
	if rw.Label != nil && !rw.labelFromReviewers && words(reason) < manifest.MinReasonWords {
		missing = append(missing, fmt.Sprintf("the label %s=%d has %s", r.fields.Label, *rw.Label, reasonText(reason, r.fields.Reason)))
	}
	for _, l := range rw.Reviewers {
		if words(l.Reason) < manifest.MinReasonWords {
			missing = append(missing, fmt.Sprintf("reviewer %s's score %d has %s", quoteValue(l.Reviewer), l.Score, reasonText(l.Reason, "reason")))
		}
	}
	if missing == nil {
		return ""
	}
	return strings.Join(missing, "; ") + fmt.Sprintf(" (gate.calibration.require_reasons asks for at least %d words)", manifest.MinReasonWords)
}

func reasonText(reason, field string) string {
	if reason == "" {
		return "no " + field
	}
	return fmt.Sprintf("the %d-word %s %s", words(reason), field, quoteValue(reason))
}

func words(s string) int { return len(strings.Fields(s)) }

func quoteValue(s string) string { return fmt.Sprintf("%q", cutValue(s)) }

// reviewerLabels reads a list of {reviewer, score, reason}; msg says what
// is wrong otherwise. raw is valid JSON (the row was scanned), so it is
// walked in place: a fifth of a million rows carrying two reviewers each
// cost a third of a second more through encoding/json.
func reviewerLabels(raw []byte) ([]ReviewerLabel, string) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return nil, fmt.Sprintf("must be a list of {reviewer, score, reason}, not %s", jsonKind(raw))
	}
	var out []ReviewerLabel
	for n, i := 0, skipSpace(raw, i+1); i < len(raw) && raw[i] != ']'; n++ {
		end := skipValue(raw, i)
		if end < 0 {
			return nil, "is not valid JSON"
		}
		el := raw[i:end]
		if el[0] != '{' {
			return nil, fmt.Sprintf("[%d] must be an object {reviewer, score, reason}, not %s", n, jsonKind(el))
		}
		var l ReviewerLabel
		name, ok := stringValue(objectField(el, "reviewer"))
		if !ok || name == "" {
			return nil, fmt.Sprintf("[%d].reviewer must be a non-empty string", n)
		}
		l.Reviewer = name
		switch s := bytes.TrimSpace(objectField(el, "score")); string(s) {
		case "0", "0.0":
			l.Score = 0
		case "1", "1.0":
			l.Score = 1
		default:
			// As for the label: true is not 1.
			if len(s) == 0 {
				s = []byte("nothing")
			}
			return nil, fmt.Sprintf("[%d].score must be 0 or 1, not %s", n, cutValue(string(s)))
		}
		if raw := objectField(el, "reason"); raw != nil && !isNull(raw) {
			v, isStr := stringValue(raw)
			if !isStr {
				return nil, fmt.Sprintf("[%d].reason must be a string, not %s", n, jsonKind(raw))
			}
			l.Reason = strings.TrimSpace(v)
		}
		out = append(out, l)
		i = skipSpace(raw, end)
		if i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
	if out == nil {
		out = []ReviewerLabel{}
	}
	return out, ""
}

// fold adds a read row to the summary.
func (f *labelFold) fold(c *Case) {
	lc := LabelCase{CaseID: c.ID, Line: c.Line}
	warnOnly := f.cal.WarnOnlyStatus(c.LabelStatus)
	if warnOnly {
		l := f.sum.WarnOnly[c.LabelStatus]
		if l == nil {
			l = &CaseList{}
			f.sum.WarnOnly[c.LabelStatus] = l
		}
		l.add(lc)
	}
	if c.StaleLabel {
		f.sum.Stale.add(LabelCase{CaseID: c.ID, Line: c.Line, Detail: c.RubricVersion})
	}
	if Disagree(c.Reviewers) {
		f.sum.Brittle.add(LabelCase{CaseID: c.ID, Line: c.Line, Detail: scoresText(c.Reviewers)})
	}
	if warnOnly || (c.StaleLabel && f.cal.CurrentLabelsOnly) || len(c.Reviewers) < 2 {
		return
	}
	f.sum.Overall.add(c.Reviewers)
	names := c.Slices
	if len(names) == 0 {
		names = []string{""}
	}
	for _, s := range names {
		a := f.sum.Agreement[s]
		if a == nil {
			a = &Agreement{}
			f.sum.Agreement[s] = a
		}
		a.add(c.Reviewers)
	}
}

// scoresText is "ana 1, ben 0".
func scoresText(labels []ReviewerLabel) string {
	parts := make([]string, len(labels))
	for i, l := range labels {
		parts[i] = fmt.Sprintf("%s %d", cutValue(l.Reviewer), l.Score)
	}
	return strings.Join(parts, ", ")
}

// Calibrates reports whether the case's label takes part in calibration
// under the calibration rules: it has one, its status is not warn-only,
// and it is not a stale label left out.
func (c Case) Calibrates(cal manifest.Calibration) bool {
	return c.Label != nil && !cal.WarnOnlyStatus(c.LabelStatus) && !(c.StaleLabel && cal.CurrentLabelsOnly)
}

// reasonHash is the screen's identity of a stated reason: 0 for none,
// else a hash of its words, lower-cased.
//
// raw is the reason as written, a JSON string; its words joined by one
// space, ASCII lower-cased, are hashed without building a string (this
// runs once a labeled row), unless it holds escapes.
func (f *labelFold) reasonHash(raw []byte) uint32 {
	if len(raw) < 2 {
		return 0
	}
	text := raw[1 : len(raw)-1]
	if bytes.IndexByte(text, '\\') >= 0 {
		s, _ := stringValue(raw)
		text = []byte(s)
	}
	var h maphash.Hash
	h.SetSeed(f.seed)
	space, any := false, false
	for _, c := range text {
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			space = true
			continue
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		if space && any {
			h.WriteByte(' ')
		}
		space, any = false, true
		h.WriteByte(c)
	}
	if !any {
		return 0
	}
	return uint32(h.Sum64()) | 1
}

// maxInterned bounds the distinct rubric versions and label statuses kept
// as one string each; further ones are read row by row.
const maxInterned = 256

// internTable holds those strings, one table a parsing goroutine.
type internTable struct{ names map[string]string }

// intern reads a JSON string that many rows repeat (a rubric version, a
// label status) as one string for all of them: a million rows cost no
// million strings.
func (t *internTable) intern(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || bytes.IndexByte(raw, '\\') >= 0 {
		return stringValue(raw)
	}
	text := raw[1 : len(raw)-1]
	if s, ok := t.names[string(text)]; ok {
		return s, true
	}
	s := string(text)
	if t.names == nil {
		t.names = map[string]string{}
	}
	if len(t.names) < maxInterned {
		t.names[s] = s
	}
	return s, true
}

// Label group codes: what validate says of the rows whose labels are in
// doubt or do not gate, before anything is graded (a run says it in its
// verdict's warnings).
const (
	CodeWarnOnlyLabels = "warn_only_labels"
	CodeBrittleLabels  = "brittle_labels"
)

// Findings are the label groups as warnings, for validate: one per
// warn-only status, in status order, and one for the brittle rows.
func (s *LabelSummary) Findings() []manifest.Finding {
	if s == nil {
		return nil
	}
	ids := func(l *CaseList, detail bool) string {
		var parts []string
		for _, c := range l.Cases[:min(5, len(l.Cases))] {
			p := c.CaseID
			if detail && c.Detail != "" {
				p += " (" + c.Detail + ")"
			}
			parts = append(parts, p)
		}
		out := strings.Join(parts, ", ")
		if l.Count > len(parts) {
			out += fmt.Sprintf(" and %d more", l.Count-len(parts))
		}
		return out
	}
	statuses := make([]string, 0, len(s.WarnOnly))
	for st := range s.WarnOnly {
		statuses = append(statuses, st)
	}
	slices.Sort(statuses)
	var out []manifest.Finding
	for _, st := range statuses {
		l := s.WarnOnly[st]
		out = append(out, manifest.Finding{Code: CodeWarnOnlyLabels, Severity: manifest.SeverityWarn, File: s.file, Line: l.Cases[0].Line,
			Message: fmt.Sprintf("%s with label status %s will be graded and shown, and count toward no threshold and no hold: %s", strings.TrimPrefix(rowCount(l.Count), "on "), quoteValue(st), ids(l, false))})
	}
	if l := &s.Brittle; l.Count > 0 {
		out = append(out, manifest.Finding{Code: CodeBrittleLabels, Severity: manifest.SeverityWarn, File: s.file, Line: l.Cases[0].Line,
			Message: fmt.Sprintf("%s whose reviewers disagreed (brittle: the rubric may need to be clearer there); calibration uses the adjudicated label: %s", strings.TrimPrefix(rowCount(l.Count), "on "), ids(l, true))})
	}
	return out
}
