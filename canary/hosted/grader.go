package hosted

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

// Grader is a hosted grader object in OpenAI's shape: a Python grader
// {"type": "python", "name": …, "source": …, "image_tag": …}, or a multi
// grader {"type": "multi", "name": …, "graders": {name: grader, …},
// "calculate_output": …} whose sub-graders are Python graders or, with
// their keys in Fields, string_check, text_similarity, score_model and
// label_model graders.
type Grader struct {
	Type     string // "python" when empty
	Name     string
	Source   string // a Python grader's: exactly the pinned bytes of the grader file
	ImageTag string

	// Graders and CalculateOutput are a multi grader's.
	Graders         map[string]Grader
	CalculateOutput string
	// Fields are the keys of a sub-grader other than a Python one (input,
	// reference, operation, evaluation_metric, model, range, labels,
	// passing_labels, sampling_params), sent as they are.
	Fields map[string]any
}

// MarshalJSON writes the grader in OpenAI's shape: source (always, even
// empty) and image_tag for a Python grader, graders and calculate_output
// for a multi grader, and Fields for any other.
func (g Grader) MarshalJSON() ([]byte, error) {
	out := make(map[string]any, len(g.Fields)+4)
	for k, v := range g.Fields {
		out[k] = v
	}
	t := g.Type
	if t == "" {
		t = "python"
	}
	out["type"], out["name"] = t, g.Name
	switch t {
	case "python":
		out["source"] = g.Source
		if g.ImageTag != "" {
			out["image_tag"] = g.ImageTag
		}
	case "multi":
		out["graders"], out["calculate_output"] = g.Graders, g.CalculateOutput
	}
	return marshal(out)
}

func (g Grader) wire() (Grader, error) {
	if g.Type == "" {
		g.Type = "python"
	}
	// JSON strings carry Unicode text only: invalid UTF-8 would be replaced
	// with U+FFFD on the way out, and the service would run bytes other than
	// the pinned ones.
	if !utf8.ValidString(g.Source) {
		return g, errors.New("grader source is not valid UTF-8, so it cannot be sent byte for byte")
	}
	for name, sub := range g.Graders {
		if _, err := sub.wire(); err != nil {
			return g, fmt.Errorf("sub-grader %s: %w", name, err)
		}
	}
	return g, nil
}

// Digest is the hex SHA-256 of what identifies the grader that was sent:
// a Python grader's source bytes, or a multi grader's JSON as sent.
func (g Grader) Digest() string {
	b := []byte(g.Source)
	if g.Type == "multi" {
		b, _ = marshal(g) // a Grader always marshals: its values are plain
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// marshal encodes v without HTML escaping (the service reads the same
// strings either way; unescaped bodies are easier to compare in logs).
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// Validate asks the service whether it accepts the grader
// (POST /v1/fine_tuning/alpha/graders/validate with {"grader": {...}}).
// A rejection is an *APIError whose Rejected method reports true.
func (c *Client) Validate(ctx context.Context, g Grader) error {
	_, err := c.validate(ctx, g)
	return err
}

func (c *Client) validate(ctx context.Context, g Grader) ([]Attempt, error) {
	w, err := g.wire()
	if err != nil {
		return nil, fmt.Errorf("hosted validate: %w", err)
	}
	body, err := marshal(struct {
		Grader Grader `json:"grader"`
	}{w})
	if err != nil {
		return nil, fmt.Errorf("hosted validate: encode request: %w", err)
	}
	// The response echoes the grader; gradegate needs nothing from it beyond
	// the success status.
	return c.post(ctx, "validate", validatePath, body, nil)
}

// RunResult is the service's answer for one graded sample, with every
// attempt it took.
type RunResult struct {
	Reward float64 `json:"reward"`
	// Name and Type are metadata.name and metadata.type.
	Name string `json:"name,omitempty"`
	Type string `json:"type,omitempty"`
	// ExecutionTime is metadata.execution_time in seconds.
	ExecutionTime float64 `json:"execution_time"`
	// ErrorFlags names every metadata.errors flag that was true, sorted
	// (python_grader_runtime_error, python_grader_server_error, other_error, …).
	ErrorFlags []string `json:"error_flags,omitempty"`
	// RuntimeError is metadata.errors.python_grader_runtime_error: the grader raised.
	RuntimeError bool `json:"runtime_error"`
	// ServerError is metadata.errors.python_grader_server_error: the service
	// failed to run the grader, which says nothing about the grader.
	ServerError bool `json:"server_error"`
	// ErrorDetails joins the *_details and *_type strings of metadata.errors
	// (python_grader_runtime_error_details first).
	ErrorDetails string `json:"error_details,omitempty"`
	// Scores and SubRewards are kept as the service sent them.
	Scores     json.RawMessage `json:"scores,omitempty"`
	SubRewards json.RawMessage `json:"sub_rewards,omitempty"`
	Attempts   []Attempt       `json:"attempts"`
}

// Errored reports whether the service flagged any error for the run: the
// reward is then not a grade.
func (r RunResult) Errored() bool { return len(r.ErrorFlags) > 0 }

// runResponse is the documented response of graders/run. Flags and details
// are read from a map so that flags the service adds later still count.
type runResponse struct {
	Reward   *float64 `json:"reward"`
	Metadata struct {
		Name          string                     `json:"name"`
		Type          string                     `json:"type"`
		ExecutionTime float64                    `json:"execution_time"`
		Errors        map[string]json.RawMessage `json:"errors"`
		Scores        json.RawMessage            `json:"scores"`
	} `json:"metadata"`
	SubRewards json.RawMessage `json:"sub_rewards"`
}

// Run grades one sample on the service (POST /v1/fine_tuning/alpha/graders/run
// with {"grader": {...}, "model_sample": "...", "item": {...}}). item may be
// nil. On error the result still carries every attempt made.
func (c *Client) Run(ctx context.Context, g Grader, modelSample string, item json.RawMessage) (RunResult, error) {
	w, err := g.wire()
	if err != nil {
		return RunResult{}, fmt.Errorf("hosted run: %w", err)
	}
	req := struct {
		Grader      Grader          `json:"grader"`
		ModelSample string          `json:"model_sample"`
		Item        json.RawMessage `json:"item,omitempty"`
	}{w, modelSample, item}
	body, err := marshal(req)
	if err != nil {
		return RunResult{}, fmt.Errorf("hosted run: encode request: %w", err)
	}
	var resp runResponse
	attempts, err := c.post(ctx, "run", runPath, body, &resp)
	res := RunResult{Attempts: attempts}
	if err != nil {
		return res, err
	}
	if resp.Reward == nil {
		err := errors.New("hosted run: response has no reward")
		res.Attempts[len(res.Attempts)-1].Error = err.Error()
		return res, err
	}
	res.Reward = *resp.Reward
	res.Name = c.redact(resp.Metadata.Name)
	res.Type = resp.Metadata.Type
	res.ExecutionTime = resp.Metadata.ExecutionTime
	res.Scores = resp.Metadata.Scores
	res.SubRewards = resp.SubRewards
	res.ErrorFlags, res.RuntimeError, res.ErrorDetails = c.readErrors(resp.Metadata.Errors)
	res.ServerError = slices.Contains(res.ErrorFlags, FlagServerError)
	return res, nil
}

// readErrors collects the true *_error flags and the details strings of
// metadata.errors.
func (c *Client) readErrors(m map[string]json.RawMessage) (flags []string, runtime bool, details string) {
	var texts []string
	for k, v := range m {
		var b bool
		if strings.HasSuffix(k, "_error") && json.Unmarshal(v, &b) == nil && b {
			flags = append(flags, k)
			if k == "python_grader_runtime_error" {
				runtime = true
			}
		}
	}
	sort.Strings(flags)
	keys := make([]string, 0, len(m))
	for k := range m {
		if strings.HasSuffix(k, "_details") || strings.HasSuffix(k, "_error_type") {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		// The grader's own traceback is what a reader wants first.
		pi, pj := keys[i] == "python_grader_runtime_error_details", keys[j] == "python_grader_runtime_error_details"
		if pi != pj {
			return pi
		}
		return keys[i] < keys[j]
	})
	for _, k := range keys {
		var s string
		if json.Unmarshal(m[k], &s) == nil && strings.TrimSpace(s) != "" {
			if k == "python_grader_runtime_error_details" {
				texts = append(texts, s)
			} else {
				texts = append(texts, k+": "+s)
			}
		}
	}
	return flags, runtime, truncate(c.redact(strings.Join(texts, "\n")), maxDetailsBytes)
}

// maxDetailsBytes bounds the hosted error details kept for one run.
const maxDetailsBytes = 8 << 10
