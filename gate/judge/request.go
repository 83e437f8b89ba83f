package judge

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/gradegate/gradegate/manifest"
)

// Endpoint paths under the base URL.
const (
	pathChat      = "/chat/completions"
	pathResponses = "/responses"
)

// request is one model call as it goes on the wire: the path under the base
// URL, the exact body, and the cache key that digests both.
type request struct {
	path string
	body []byte
	key  string // hex sha256 of "POST <path>\n<body>"
	// repeat is which ask of the same request this is (gate.repeats); 0
	// for the first, whose key is the request's own, so a cache recorded
	// without repeats still answers it.
	repeat int
}

// asked is the k-th ask of the same request: its own cache entry, keyed
// by the request's key and k.
func (r request) asked(k int) request {
	if k <= 0 {
		return r
	}
	r.repeat = k
	h := sha256.New()
	fmt.Fprintf(h, "%s\nrepeat %d", r.key, k)
	r.key = hex.EncodeToString(h.Sum(nil))
	return r
}

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// chatRequest is the body of POST /chat/completions. Field order is fixed by
// the struct, so the same grader and task always give the same bytes.
type chatRequest struct {
	Model               string          `json:"model"`
	Messages            []message       `json:"messages"`
	ResponseFormat      json.RawMessage `json:"response_format"`
	Seed                *int64          `json:"seed,omitempty"`
	Temperature         *float64        `json:"temperature,omitempty"`
	TopP                *float64        `json:"top_p,omitempty"`
	MaxCompletionTokens *int            `json:"max_completion_tokens,omitempty"`
	ReasoningEffort     string          `json:"reasoning_effort,omitempty"`
}

// responsesRequest is the body of POST /responses.
type responsesRequest struct {
	Model           string          `json:"model"`
	Input           []message       `json:"input"`
	Text            json.RawMessage `json:"text"`
	Temperature     *float64        `json:"temperature,omitempty"`
	TopP            *float64        `json:"top_p,omitempty"`
	MaxOutputTokens *int            `json:"max_output_tokens,omitempty"`
	Reasoning       *reasoning      `json:"reasoning,omitempty"`
	// Store false: a grading call has no reason to be kept server-side.
	Store bool `json:"store"`
}

type reasoning struct {
	Effort string `json:"effort"`
}

// resultSchema is the structured output OpenAI's own model graders ask for:
// {"steps": [{"description", "conclusion"}], "result": ...}, where result is
// a number for score_model and one of the labels for label_model.
func resultSchema(g manifest.Grader) (name string, schema any) {
	result := any(map[string]any{"type": "number"})
	name = "score_model_result"
	if g.Type == manifest.TypeLabelModel {
		result = map[string]any{"type": "string", "enum": g.Judge.Labels}
		name = "label_model_result"
	}
	step := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"description": map[string]any{"type": "string"},
			"conclusion":  map[string]any{"type": "string"},
		},
		"required":             []string{"description", "conclusion"},
		"additionalProperties": false,
	}
	return name, map[string]any{
		"type": "object",
		"properties": map[string]any{
			"steps":  map[string]any{"type": "array", "items": step},
			"result": result,
		},
		"required":             []string{"steps", "result"},
		"additionalProperties": false,
	}
}

// responseFormat is the encoded structured-output request of the grader's
// endpoint: chat completions' response_format, or the responses API's
// text. It is the same for every task, so it is encoded once.
func responseFormat(g manifest.Grader) (json.RawMessage, error) {
	name, schema := resultSchema(g)
	var v any = map[string]any{"type": "json_schema", "json_schema": map[string]any{
		"name": name, "strict": true, "schema": schema,
	}}
	if g.Judge.Endpoint == manifest.EndpointResponses {
		v = map[string]any{"format": map[string]any{
			"type": "json_schema", "name": name, "strict": true, "schema": schema,
		}}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encoding the response format: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// buildRequest renders the grader's prompt for one task and encodes the
// request for the grader's endpoint; format is responseFormat(g).
func buildRequest(g manifest.Grader, format json.RawMessage, v vars) (request, error) {
	j := g.Judge
	msgs := make([]message, len(j.Input))
	for i, m := range j.Input {
		text, err := render(m.Content, v)
		if err != nil {
			return request{}, err
		}
		msgs[i] = message{Role: m.Role, Content: text}
	}
	p := j.SamplingParams
	var body any
	path := pathChat
	switch j.Endpoint {
	case manifest.EndpointResponses:
		path = pathResponses
		r := responsesRequest{
			Model:           j.Model,
			Input:           msgs,
			Text:            format,
			Temperature:     p.Temperature,
			TopP:            p.TopP,
			MaxOutputTokens: p.MaxCompletionsTokens,
		}
		if p.ReasoningEffort != "" {
			r.Reasoning = &reasoning{Effort: p.ReasoningEffort}
		}
		body = r
	default:
		body = chatRequest{
			Model:               j.Model,
			Messages:            msgs,
			ResponseFormat:      format,
			Seed:                p.Seed,
			Temperature:         p.Temperature,
			TopP:                p.TopP,
			MaxCompletionTokens: p.MaxCompletionsTokens,
			ReasoningEffort:     p.ReasoningEffort,
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(body); err != nil {
		return request{}, fmt.Errorf("encoding the request: %w", err)
	}
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	return request{path: path, body: b, key: requestKey(path, b)}, nil
}

// requestKey is the cache key of a request: the sha256 of its method, path
// and exact body. The base URL and the key are not part of it, so a cache
// recorded against OpenAI replays behind a proxy and the other way round.
func requestKey(path string, body []byte) string {
	h := sha256.New()
	h.Write([]byte("POST " + path + "\n"))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}
