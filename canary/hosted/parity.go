package hosted

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/gradegate/gradegate/manifest"
)

// Schema names the JSON shape of a Report.
const Schema = "gradegate.hosted/v1"

// Local is one canary's outcome in the local sandbox, as the caller graded it.
type Local struct {
	Name    string   `json:"name"`
	Got     *float64 `json:"got"`             // the score, when the grader returned one
	Errored bool     `json:"errored"`         // the case was unevaluable locally
	Class   string   `json:"class,omitempty"` // ok, grader_exception, invalid_return, …
}

// Hosted is one canary's outcome on the service.
type Hosted struct {
	Reward       float64  `json:"reward"`
	Errored      bool     `json:"errored"`       // any metadata.errors flag was true
	RuntimeError bool     `json:"runtime_error"` // python_grader_runtime_error: the grader raised
	ErrorFlags   []string `json:"error_flags,omitempty"`
}

// Sample sources: where a canary's model_sample came from.
const (
	SampleOutputText = "output_text" // the sample's output_text string
	SampleJSON       = "sample_json" // the whole sample, JSON-encoded
)

// Row is one canary's parity: its expectation, the local and hosted outcomes,
// and whether they agree.
type Row struct {
	Name        string   `json:"name"`
	Expect      *float64 `json:"expect"`
	ExpectError bool     `json:"expect_error"`
	Tolerance   float64  `json:"tolerance,omitempty"`
	// Local is nil when the caller passed no local outcome for this canary.
	Local *Local `json:"local"`
	// Hosted is nil when the service gave no answer (see Error).
	Hosted             *Hosted `json:"hosted"`
	HostedErrorDetails string  `json:"hosted_error_details,omitempty"`
	// SampleFrom says what was sent as model_sample: SampleOutputText or SampleJSON.
	SampleFrom  string `json:"sample_from"`
	AgreeExpect bool   `json:"agree_expect"`
	AgreeLocal  bool   `json:"agree_local"`
	// Error says why the canary got no hosted answer.
	Error string `json:"error,omitempty"`
	// Notes explain anything a reader should know about the row.
	Notes    []string  `json:"notes,omitempty"`
	Attempts []Attempt `json:"attempts"`
}

// OK reports whether the hosted outcome agrees with both the expectation and
// the local outcome.
func (r Row) OK() bool { return r.AgreeExpect && r.AgreeLocal }

// GraderInfo identifies the grader that was sent.
type GraderInfo struct {
	Type     string `json:"type"`
	Name     string `json:"name"`
	ImageTag string `json:"image_tag,omitempty"`
	// SHA256 is the digest of the source bytes that were sent.
	SHA256 string `json:"sha256"`
}

// Validation is the outcome of graders/validate.
type Validation struct {
	OK       bool      `json:"ok"`
	Error    string    `json:"error,omitempty"`
	Attempts []Attempt `json:"attempts"`
}

// Report is the local-versus-hosted parity of a grader's canaries.
type Report struct {
	Schema   string     `json:"schema"`
	BaseURL  string     `json:"base_url"`
	Grader   GraderInfo `json:"grader"`
	Validate Validation `json:"validate"`
	Rows     []Row      `json:"canaries"`
	// Status is "pass" when OK, "fail" otherwise.
	Status string `json:"status"`
	// Problems names each canary (or the validation) that failed parity, and why.
	Problems []string `json:"problems"`
}

// OK reports whether the service accepted the grader and every canary agreed
// with its expectation and with the local outcome.
func (r *Report) OK() bool {
	if r == nil || !r.Validate.OK || len(r.Rows) == 0 {
		return false
	}
	for _, row := range r.Rows {
		if !row.OK() {
			return false
		}
	}
	return true
}

// Parity validates g on the service, runs every canary there, and compares
// each hosted outcome with the canary's expectation and with the local
// outcome of the same name in local.
//
// Disagreements, a grader the service rejects, and a request the service
// rejects (400, 404, 422) are findings, recorded in the Report. The returned
// error is non-nil when the service could not be used to answer (auth, rate
// limits or server errors past every retry, network failure, a cancelled
// context); the Report is then still returned with what was learned, and is
// never OK.
func Parity(ctx context.Context, c *Client, g Grader, canaries []manifest.Canary, local []Local, threshold float64) (*Report, error) {
	if c == nil {
		return nil, errors.New("hosted parity: no client")
	}
	// threshold is the grader's pass_threshold. A hosted reward within
	// tolerance of the expectation can still fall on the other side of it; the
	// polarity check below makes that a disagreement too (SPEC section 6).
	sum := sha256.Sum256([]byte(g.Source))
	w := g
	if w.Type == "" {
		w.Type = "python"
	}
	rep := &Report{
		Schema:   Schema,
		BaseURL:  c.BaseURL(),
		Grader:   GraderInfo{Type: w.Type, Name: w.Name, ImageTag: w.ImageTag, SHA256: hex.EncodeToString(sum[:])},
		Rows:     make([]Row, 0, len(canaries)),
		Problems: []string{},
	}
	byName := make(map[string]Local, len(local))
	for _, l := range local {
		byName[l.Name] = l
	}

	var failures []error
	attempts, verr := c.validate(ctx, g)
	rep.Validate = Validation{OK: verr == nil, Attempts: nonNil(attempts)}
	if verr != nil {
		rep.Validate.Error = c.redact(verr.Error())
		rep.Problems = append(rep.Problems, "grader validation failed: "+rep.Validate.Error)
		if !rejected(verr) {
			failures = append(failures, fmt.Errorf("validate grader %q: %w", g.Name, verr))
		}
	}

	for _, cn := range canaries {
		row := Row{Name: cn.Name, Expect: cn.Expect, ExpectError: cn.ExpectError, Tolerance: cn.Tolerance, Attempts: []Attempt{}}
		if l, ok := byName[cn.Name]; ok {
			row.Local = &l
		}
		sample, from, err := modelSample(cn.Sample)
		row.SampleFrom = from
		switch {
		case err != nil:
			row.Error = err.Error()
		case from == SampleJSON:
			row.Notes = append(row.Notes, "sample has no output_text string: sent the whole sample JSON-encoded as model_sample")
		}
		switch {
		case row.Error != "":
		case verr != nil:
			row.Error = "not run: the grader did not pass validation"
		case ctx.Err() != nil:
			row.Error = "not run: " + ctx.Err().Error()
		default:
			res, rerr := c.Run(ctx, g, sample, cn.Item)
			row.Attempts = nonNil(res.Attempts)
			if rerr != nil {
				row.Error = c.redact(rerr.Error())
				if !rejected(rerr) {
					failures = append(failures, fmt.Errorf("canary %q: %w", cn.Name, rerr))
				}
			} else {
				row.Hosted = &Hosted{Reward: res.Reward, Errored: res.Errored(), RuntimeError: res.RuntimeError, ErrorFlags: res.ErrorFlags}
				row.HostedErrorDetails = res.ErrorDetails
			}
		}
		var why []string
		row.AgreeExpect, why = agreeExpect(cn, row.Hosted, threshold)
		var whyLocal []string
		row.AgreeLocal, whyLocal = agreeLocal(cn, row.Local, row.Hosted)
		why = append(why, whyLocal...)
		row.Notes = append(row.Notes, why...)
		if row.Error != "" {
			why = append([]string{row.Error}, why...)
		}
		if !row.OK() {
			rep.Problems = append(rep.Problems, fmt.Sprintf("canary %q: %s", cn.Name, joinWhy(why)))
		}
		rep.Rows = append(rep.Rows, row)
	}
	if len(canaries) == 0 {
		rep.Problems = append(rep.Problems, "no canaries to compare")
	}
	rep.Status = "fail"
	if rep.OK() {
		rep.Status = "pass"
	}
	return rep, errors.Join(failures...)
}

func nonNil(a []Attempt) []Attempt {
	if a == nil {
		return []Attempt{}
	}
	return a
}

// rejected reports whether err is the service refusing the request itself
// (a finding about the grader or the canary), not a failure to serve it.
func rejected(err error) bool {
	var apiErr *APIError
	return errors.As(err, &apiErr) && apiErr.Rejected()
}

// modelSample derives the run endpoint's model_sample string from a canary
// sample: its output_text when that is a string, else the whole sample as JSON.
func modelSample(sample json.RawMessage) (string, string, error) {
	if len(bytes.TrimSpace(sample)) == 0 {
		return "", SampleJSON, errors.New("canary has no sample")
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(sample, &obj) == nil {
		var text string
		if raw, ok := obj["output_text"]; ok && json.Unmarshal(raw, &text) == nil {
			return text, SampleOutputText, nil
		}
	}
	var b bytes.Buffer
	if err := json.Compact(&b, sample); err != nil {
		return "", SampleJSON, fmt.Errorf("canary sample is not JSON: %w", err)
	}
	return b.String(), SampleJSON, nil
}

// within reports whether a and b are equal within tol (exact when tol is 0).
// A tolerance is meant to include its bound, which binary floating point
// can miss by an ulp (0.505-0.495 > 0.01), hence the slack.
func within(a, b, tol float64) bool {
	if a == b {
		return true
	}
	return tol > 0 && math.Abs(a-b) <= tol*(1+1e-9)
}

// agreeExpect compares the hosted outcome with the canary's expectation.
func agreeExpect(cn manifest.Canary, h *Hosted, threshold float64) (bool, []string) {
	switch {
	case h == nil:
		return false, nil
	case cn.ExpectError:
		if h.RuntimeError {
			return true, nil
		}
		if h.Errored {
			return false, []string{fmt.Sprintf("expected the grader to raise; hosted flagged %v but not python_grader_runtime_error", h.ErrorFlags)}
		}
		return false, []string{fmt.Sprintf("expected the grader to raise; hosted returned reward %s", num(h.Reward))}
	case cn.Expect == nil:
		return false, []string{"canary has neither expect nor expect_error"}
	case h.Errored:
		return false, []string{fmt.Sprintf("expected reward %s; hosted flagged %v", num(*cn.Expect), h.ErrorFlags)}
	case !within(h.Reward, *cn.Expect, cn.Tolerance):
		return false, []string{fmt.Sprintf("expected reward %s; hosted returned %s", num(*cn.Expect), num(h.Reward))}
	case (*cn.Expect >= threshold) != (h.Reward >= threshold):
		return false, []string{fmt.Sprintf("hosted reward %s is on the other side of pass_threshold %s from expect %s", num(h.Reward), num(threshold), num(*cn.Expect))}
	}
	return true, nil
}

// agreeLocal compares the hosted outcome with the local one: both errored,
// or both returned rewards equal within the canary's tolerance.
func agreeLocal(cn manifest.Canary, l *Local, h *Hosted) (bool, []string) {
	switch {
	case h == nil:
		return false, nil
	case l == nil:
		return false, []string{"no local outcome to compare"}
	case l.Errored && h.Errored:
		return true, nil
	case l.Errored:
		return false, []string{fmt.Sprintf("local errored (%s); hosted returned reward %s", orUnknown(l.Class), num(h.Reward))}
	case h.Errored:
		return false, []string{fmt.Sprintf("hosted flagged %v; local did not error", h.ErrorFlags)}
	case l.Got == nil:
		return false, []string{"local returned no score"}
	case !within(h.Reward, *l.Got, cn.Tolerance):
		return false, []string{fmt.Sprintf("local returned %s; hosted returned %s", num(*l.Got), num(h.Reward))}
	}
	return true, nil
}

func orUnknown(s string) string {
	if s == "" {
		return "class unknown"
	}
	return s
}

func joinWhy(why []string) string {
	if len(why) == 0 {
		return "disagrees"
	}
	return strings.Join(why, "; ")
}
