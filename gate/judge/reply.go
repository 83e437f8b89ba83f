package judge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/manifest"
)

// envelope is what the API's answer to one call says: the model's reply
// text and the tokens it cost.
type envelope struct {
	text    string
	refusal string
	tokens  results.Tokens
}

// errEnvelope marks an answer that is not the endpoint's response shape:
// the service (or a proxy) misbehaved, which is a tool failure, not the
// judge's reply.
var errEnvelope = errors.New("not a response of the endpoint")

// parseEnvelope reads the model's reply out of a chat completions or
// responses body.
func parseEnvelope(path string, body []byte) (envelope, error) {
	if path == pathResponses {
		var r struct {
			Object string `json:"object"`
			Output []struct {
				Type    string `json:"type"`
				Content []struct {
					Type    string `json:"type"`
					Text    string `json:"text"`
					Refusal string `json:"refusal"`
				} `json:"content"`
			} `json:"output"`
			Usage *struct {
				InputTokens  int64 `json:"input_tokens"`
				OutputTokens int64 `json:"output_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal(body, &r); err != nil || r.Output == nil {
			return envelope{}, fmt.Errorf("%w: no output list", errEnvelope)
		}
		var e envelope
		for _, o := range r.Output {
			if o.Type != "message" {
				continue
			}
			for _, c := range o.Content {
				switch c.Type {
				case "output_text":
					e.text += c.Text
				case "refusal":
					e.refusal += c.Refusal
				}
			}
		}
		if r.Usage != nil {
			e.tokens = results.Tokens{Input: r.Usage.InputTokens, Output: r.Usage.OutputTokens}
		}
		return e, nil
	}
	var r struct {
		Choices []struct {
			Message struct {
				Content *string `json:"content"`
				Refusal *string `json:"refusal"`
			} `json:"message"`
		} `json:"choices"`
		Usage *struct {
			PromptTokens     int64 `json:"prompt_tokens"`
			CompletionTokens int64 `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(body, &r); err != nil || len(r.Choices) == 0 {
		return envelope{}, fmt.Errorf("%w: no choices", errEnvelope)
	}
	var e envelope
	if c := r.Choices[0].Message.Content; c != nil {
		e.text = *c
	}
	if c := r.Choices[0].Message.Refusal; c != nil {
		e.refusal = *c
	}
	if r.Usage != nil {
		e.tokens = results.Tokens{Input: r.Usage.PromptTokens, Output: r.Usage.CompletionTokens}
	}
	return e, nil
}

// verdict is what a reply says: a score in range, or a label and its score.
type verdict struct {
	score float64
	label string // label_model only
}

// maxReplyShown bounds the reply kept in a case's judge field and messages.
const maxReplyShown = 2000

// parseReply reads the judge's reply strictly. A score_model reply is the
// structured output OpenAI's graders ask for ({"result": number, "steps":
// [...]}) or a bare number, within range; a label_model reply is {"result":
// label} or the label alone, exactly. Anything else is an invalid return,
// never a score: a reply that cannot be read is not a fail, and certainly
// not a pass.
func parseReply(g manifest.Grader, e envelope) (verdict, error) {
	if e.refusal != "" {
		return verdict{}, fmt.Errorf("the model refused: %q", cut(e.refusal))
	}
	text := strings.TrimSpace(e.text)
	if text == "" {
		return verdict{}, errors.New("the model's reply is empty")
	}
	j := g.Judge
	result := json.RawMessage(text)
	var obj map[string]json.RawMessage
	if strings.HasPrefix(text, "{") {
		if err := json.Unmarshal([]byte(text), &obj); err != nil {
			return verdict{}, fmt.Errorf("the reply %q is not valid JSON", cut(text))
		}
		r, ok := obj["result"]
		if !ok {
			return verdict{}, fmt.Errorf("the reply %q has no result", cut(text))
		}
		result = r
	}
	if g.Type == manifest.TypeLabelModel {
		label := text
		if obj != nil || strings.HasPrefix(text, `"`) {
			if err := json.Unmarshal(result, &label); err != nil {
				return verdict{}, fmt.Errorf("the reply's result %q is not a label", cut(string(result)))
			}
		}
		if !slices.Contains(j.Labels, label) {
			return verdict{}, fmt.Errorf("the reply %q is none of the labels (%s)", cut(label), strings.Join(j.Labels, ", "))
		}
		v := verdict{label: label}
		if slices.Contains(j.PassingLabels, label) {
			v.score = 1
		}
		return v, nil
	}
	if bytes.HasPrefix(bytes.TrimSpace(result), []byte(`"`)) {
		return verdict{}, fmt.Errorf("the reply's result %s is a string, not a number", cut(string(result)))
	}
	var num json.Number
	dec := json.NewDecoder(bytes.NewReader(result))
	dec.UseNumber()
	if err := dec.Decode(&num); err != nil || dec.More() {
		return verdict{}, fmt.Errorf("the reply %q is not a number", cut(text))
	}
	f, err := strconv.ParseFloat(num.String(), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return verdict{}, fmt.Errorf("the reply's result %s is not a finite number", cut(num.String()))
	}
	if f < j.Range[0] || f > j.Range[1] {
		return verdict{}, fmt.Errorf("the score %g is outside range [%g, %g]", f, j.Range[0], j.Range[1])
	}
	return verdict{score: f}, nil
}

// cut bounds a reply for a message, on a rune boundary.
func cut(s string) string {
	if len(s) <= maxReplyShown {
		return s
	}
	i := maxReplyShown
	for i > 0 && !isRuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
