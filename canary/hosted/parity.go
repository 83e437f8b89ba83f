package hosted

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
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
	ServerError  bool     `json:"server_error"`  // python_grader_server_error: the service failed
	ErrorFlags   []string `json:"error_flags,omitempty"`
}

// The metadata.errors flags of graders/run that parity reads by name.
const (
	FlagRuntimeError      = "python_grader_runtime_error"
	FlagServerError       = "python_grader_server_error"
	FlagOtherError        = "other_error"
	FlagUnresponsiveError = "unresponsive_reward_error"
)

// ErrServiceFailed marks a run the service itself failed
// (python_grader_server_error): not a verdict on the grader, and not
// something gradegate can compare. Test with errors.Is.
var ErrServiceFailed = errors.New("the hosted grader service failed (python_grader_server_error)")

// flagsFor says, for each local outcome class of an unevaluable case, which
// metadata.errors flags a hosted run must raise (any one of them) to count
// as the same outcome. The hosted grader reports a raise, an unusable return
// and a grader out of memory as python_grader_runtime_error or other_error,
// a grader that never answers as unresponsive_reward_error; a local timeout
// does not agree with a hosted runtime error, nor a local raise with a
// hosted timeout.
func flagsFor(class string) []string {
	switch class {
	case "grader_exception", "sandbox_violation":
		return []string{FlagRuntimeError}
	case "invalid_return", "memory_exceeded":
		return []string{FlagRuntimeError, FlagOtherError}
	case "timeout":
		return []string{FlagUnresponsiveError}
	case "worker_crash":
		return []string{FlagOtherError, FlagUnresponsiveError}
	}
	return nil
}

// Sample sources: what was sent as a canary's model_sample.
const (
	// SampleOutputText: the sample's output_text string, which is all the
	// hosted grader's sample is built from.
	SampleOutputText = "output_text"
	// SampleNotComparable: the hosted grader cannot be given this sample,
	// so the canary was not run there.
	SampleNotComparable = "not_comparable"
)

// Row statuses.
const (
	RowAgree         = "agree"
	RowDisagree      = "disagree"
	RowNotComparable = "not_comparable"
	RowError         = "error"
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
	// SampleFrom says what was sent as model_sample: SampleOutputText, or
	// SampleNotComparable when nothing could be.
	SampleFrom string `json:"sample_from"`
	// Comparable is false when the hosted grader cannot be given the
	// canary's sample (see Parity); such a row is neither agreement nor
	// disagreement.
	Comparable  bool `json:"comparable"`
	AgreeExpect bool `json:"agree_expect"`
	AgreeLocal  bool `json:"agree_local"`
	// Status is RowAgree, RowDisagree, RowNotComparable or RowError.
	Status string `json:"status"`
	// Error says why the canary got no hosted answer.
	Error string `json:"error,omitempty"`
	// Notes explain anything a reader should know about the row.
	Notes    []string  `json:"notes,omitempty"`
	Attempts []Attempt `json:"attempts"`
}

// OK reports whether the hosted outcome agrees with both the expectation and
// the local outcome. A row that is not comparable is not OK.
func (r Row) OK() bool { return r.Comparable && r.AgreeExpect && r.AgreeLocal }

// GraderInfo identifies the grader that was sent.
type GraderInfo struct {
	Type     string `json:"type"`
	Name     string `json:"name"`
	ImageTag string `json:"image_tag,omitempty"`
	// SHA256 is the digest of the source bytes that were sent, or of a
	// multi grader's JSON as sent (Grader.Digest).
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
	// NotComparable names the canaries the hosted grader could not be given.
	NotComparable []string `json:"not_comparable"`
}

// OK reports whether the service accepted the grader, at least one canary
// could be compared, and every comparable canary agreed with its expectation
// and with the local outcome.
func (r *Report) OK() bool {
	if r == nil || !r.Validate.OK {
		return false
	}
	compared := 0
	for _, row := range r.Rows {
		if !row.Comparable {
			continue
		}
		compared++
		if !row.OK() {
			return false
		}
	}
	return compared > 0
}

// Parity validates g on the service, runs every canary there, and compares
// each hosted outcome with the canary's expectation and with the local
// outcome of the same name in local.
//
// The hosted grader builds its sample from the model_sample string alone:
// output_text is that string and output_json its parse when it is JSON. A
// canary is sent only when its sample says no more than that (a string
// output_text, and an output_json, if any, equal to the text's parse);
// any other canary is reported as not comparable and not run, since the two
// sides would grade different samples and agree, if at all, by chance.
//
// A local unevaluable outcome agrees with a hosted one only through the
// flags its class maps to (flagsFor): a local timeout does not agree with a
// hosted runtime error.
//
// Disagreements, a grader the service rejects, and a request the service
// rejects (400, 422) are findings, recorded in the Report. The returned
// error is non-nil when the service could not be used to answer: auth, a 404
// (ErrUnavailable: the hosted graders are gone), rate limits or server
// errors past every retry, a run the service failed
// (python_grader_server_error, ErrServiceFailed), network failure, a
// cancelled context. The Report is then still returned with what was
// learned, and is never OK.
func Parity(ctx context.Context, c *Client, g Grader, canaries []manifest.Canary, local []Local, threshold float64) (*Report, error) {
	if c == nil {
		return nil, errors.New("hosted parity: no client")
	}
	// threshold is the grader's pass_threshold. A hosted reward within
	// tolerance of the expectation can still fall on the other side of it; the
	// polarity check below makes that a disagreement too.
	w := g
	if w.Type == "" {
		w.Type = "python"
	}
	rep := &Report{
		Schema:        Schema,
		BaseURL:       c.BaseURL(),
		Grader:        GraderInfo{Type: w.Type, Name: w.Name, ImageTag: w.ImageTag, SHA256: g.Digest()},
		Rows:          make([]Row, 0, len(canaries)),
		Problems:      []string{},
		NotComparable: []string{},
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
		sample, why := modelSample(cn.Sample)
		if why != "" {
			row.SampleFrom = SampleNotComparable
			row.Status = RowNotComparable
			row.Notes = append(row.Notes, "not comparable: "+why)
			rep.NotComparable = append(rep.NotComparable, cn.Name)
			rep.Rows = append(rep.Rows, row)
			continue
		}
		row.SampleFrom = SampleOutputText
		row.Comparable = true
		switch {
		case verr != nil && errors.Is(verr, ErrUnavailable):
			row.Error = "not run: " + ErrUnavailable.Error()
		case verr != nil:
			row.Error = "not run: the grader did not pass validation"
		case ctx.Err() != nil:
			row.Error = "not run: " + ctx.Err().Error()
		default:
			res, rerr := c.Run(ctx, g, sample, cn.Item)
			row.Attempts = nonNil(res.Attempts)
			switch {
			case rerr != nil:
				row.Error = c.redact(rerr.Error())
				if !rejected(rerr) {
					failures = append(failures, fmt.Errorf("canary %q: %w", cn.Name, rerr))
				}
			case res.ServerError:
				// The service failing to run the grader says nothing about
				// the grader: gradegate could not get an answer.
				row.Error = ErrServiceFailed.Error()
				row.HostedErrorDetails = res.ErrorDetails
				failures = append(failures, fmt.Errorf("canary %q: %w", cn.Name, ErrServiceFailed))
			default:
				row.Hosted = &Hosted{Reward: res.Reward, Errored: res.Errored(), RuntimeError: res.RuntimeError, ErrorFlags: res.ErrorFlags}
				row.HostedErrorDetails = res.ErrorDetails
			}
		}
		var why2 []string
		row.AgreeExpect, why2 = agreeExpect(cn, row.Hosted, threshold)
		var whyLocal []string
		row.AgreeLocal, whyLocal = agreeLocal(cn, row.Local, row.Hosted)
		why2 = append(why2, whyLocal...)
		row.Notes = append(row.Notes, why2...)
		if row.Error != "" {
			why2 = append([]string{row.Error}, why2...)
		}
		switch {
		case row.OK():
			row.Status = RowAgree
		case row.Hosted == nil:
			row.Status = RowError
		default:
			row.Status = RowDisagree
		}
		if !row.OK() {
			rep.Problems = append(rep.Problems, fmt.Sprintf("canary %q: %s", cn.Name, joinWhy(why2)))
		}
		rep.Rows = append(rep.Rows, row)
	}
	switch {
	case len(canaries) == 0:
		rep.Problems = append(rep.Problems, "no canaries to compare")
	case len(rep.NotComparable) == len(canaries):
		rep.Problems = append(rep.Problems, "no canary could be compared: the hosted grader can only be given a sample's output_text string")
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

// modelSample derives the run endpoint's model_sample from a canary sample:
// its output_text string. why is set when the hosted grader cannot be given
// the sample: it has no string output_text, or carries anything besides
// output_text and an output_json equal to the text's parse, since the hosted
// grader builds its sample from the string alone. A local sample with only
// output_text is sent: the hosted side then also sees output_json when the
// text is JSON, which a grader reading output_json may notice, and the README
// says so.
func modelSample(sample json.RawMessage) (text, why string) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(sample, &obj) != nil || obj == nil {
		return "", "the sample is not a JSON object"
	}
	raw, ok := obj["output_text"]
	if !ok || json.Unmarshal(raw, &text) != nil {
		return "", "the sample has no string output_text, and the hosted grader builds its sample from that string alone"
	}
	var parsed any
	isJSON := json.Unmarshal([]byte(text), &parsed) == nil
	var extra []string
	for k, v := range obj {
		switch k {
		case "output_text":
		case "output_json":
			var local any
			if !isJSON || json.Unmarshal(v, &local) != nil || !reflect.DeepEqual(local, parsed) {
				return "", "the sample's output_json is not the parse of its output_text, and the hosted grader derives it from the text"
			}
		default:
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return "", fmt.Sprintf("the sample carries %s, which the hosted grader cannot be given (it builds its sample from output_text alone)", strings.Join(extra, ", "))
	}
	return text, ""
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

// agreeLocal compares the hosted outcome with the local one: an unevaluable
// local outcome agrees only with a hosted run that raised one of the flags
// its class maps to (flagsFor), a score only with a reward equal within the
// canary's tolerance.
func agreeLocal(cn manifest.Canary, l *Local, h *Hosted) (bool, []string) {
	switch {
	case h == nil:
		return false, nil
	case l == nil:
		return false, []string{"no local outcome to compare"}
	case l.Errored && !h.Errored:
		return false, []string{fmt.Sprintf("local errored (%s); hosted returned reward %s", orUnknown(l.Class), num(h.Reward))}
	case l.Errored:
		want := flagsFor(l.Class)
		for _, f := range h.ErrorFlags {
			if slices.Contains(want, f) {
				return true, nil
			}
		}
		if len(want) == 0 {
			return false, []string{fmt.Sprintf("local errored (%s), which maps to no hosted error flag; hosted flagged %v", orUnknown(l.Class), h.ErrorFlags)}
		}
		return false, []string{fmt.Sprintf("local errored (%s), which agrees only with hosted %s; hosted flagged %v", l.Class, strings.Join(want, " or "), h.ErrorFlags)}
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
