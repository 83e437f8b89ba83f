package judge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/manifest"
)

// pathEmbeddings is the embeddings endpoint under the base URL.
const pathEmbeddings = "/embeddings"

// Exception types a Python grader sees for a refused ctx call.
const (
	ErrCallRefused     = "ModelCallError"
	ErrCallNotRecorded = "ModelCallNotRecorded"
)

// BrokerConfig is how a Broker calls.
type BrokerConfig struct {
	// Config gives the endpoint, key, HTTP client, cache and retry rules
	// (its Grader is not used).
	Config
	// JudgeModel and EmbeddingModel resolve model="auto" (or no model).
	JudgeModel     string
	EmbeddingModel string
	// Timeout bounds one attempt of one call (grader.timeout_seconds).
	Timeout time.Duration
	// Replay answers only from the cache and from Memo, never the network:
	// a call neither recorded is ModelCallNotRecorded in the grader
	// (mutation testing).
	Replay bool
	// Memo, when set, is shared with other brokers of the run: the calls
	// one answered, which Replay brokers replay.
	Memo *Memo
}

// Broker makes the model calls Python graders ask for through ctx
// (ctx.responses_create, ctx.embeddings_create), with the run's key,
// through the same client, cache and retry rules as the model graders.
// It implements grading.ModelBroker.
type Broker struct {
	cfg    BrokerConfig
	client *client
	cache  *Cache
	mode   CacheMode
	now    func() time.Time
	memo   *Memo

	mu    sync.Mutex
	usage results.JudgeUsage
}

var _ grading.ModelBroker = (*Broker)(nil)

// Memo holds the answers of the calls of one run, by request key, so
// later stages (mutation testing, the determinism check) can replay them
// without a cache folder. It is bounded: past memoLimit bytes it keeps no
// more.
type Memo struct {
	mu    sync.Mutex
	bytes int
	m     map[string][]byte
}

// memoLimit bounds the bytes a Memo holds.
const memoLimit = 64 << 20

// NewMemo returns an empty Memo.
func NewMemo() *Memo { return &Memo{m: map[string][]byte{}} }

func (m *Memo) get(key string) ([]byte, bool) {
	if m == nil {
		return nil, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.m[key]
	return b, ok
}

func (m *Memo) put(key string, body []byte) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.m[key]; ok || m.bytes+len(body) > memoLimit {
		return
	}
	m.m[key] = body
	m.bytes += len(body)
}

// NewBroker returns a Broker for cfg. It makes no call.
func NewBroker(cfg BrokerConfig) *Broker {
	b := &Broker{cfg: cfg, cache: cfg.Cache, mode: cfg.CacheMode, now: cfg.Now, memo: cfg.Memo}
	if b.cache == nil {
		b.mode = CacheOff
	} else if b.mode == "" {
		b.mode = CacheReadWrite
	}
	if cfg.Replay && b.mode.writes() {
		b.mode = CacheRead
		if b.cache == nil {
			b.mode = CacheOff
		}
	}
	if b.now == nil {
		b.now = time.Now
	}
	if !cfg.Replay {
		b.client = cfg.newClient(cfg.Timeout)
	}
	// The usage names the model it asks: judge_model, else (a grader that
	// only embeds, a cosine sub-grader) embedding_model.
	model := cfg.JudgeModel
	if model == "" {
		model = cfg.EmbeddingModel
	}
	b.usage = results.JudgeUsage{Type: "python", Model: model, Endpoint: "ctx", CacheMode: string(b.mode)}
	return b
}

// Usage is what the calls so far cost.
func (b *Broker) Usage() *results.JudgeUsage {
	b.mu.Lock()
	defer b.mu.Unlock()
	u := b.usage
	return &u
}

// HasKey reports whether the broker may call the API.
func (b *Broker) HasKey() bool { return b.client != nil }

// Call makes one call for a grader. See grading.ModelBroker.
func (b *Broker) Call(ctx context.Context, kind string, args json.RawMessage) (json.RawMessage, grading.ModelCall, error) {
	r, model, err := b.request(kind, args)
	call := grading.ModelCall{Kind: kind, Model: model, Request: r.key}
	if err != nil {
		return nil, call, err
	}
	body, cached, ms, err := b.answer(ctx, r)
	call.Cached, call.DurationMS = cached, ms
	if err != nil {
		return nil, call, err
	}
	tokens := callTokens(body)
	call.InputTokens, call.OutputTokens = tokens.Input, tokens.Output
	b.mu.Lock()
	b.usage.WallMS += ms
	if cached {
		b.usage.Cached++
		b.usage.CachedTokens.Input += tokens.Input
		b.usage.CachedTokens.Output += tokens.Output
	} else {
		b.usage.Tokens.Input += tokens.Input
		b.usage.Tokens.Output += tokens.Output
	}
	b.mu.Unlock()
	if kind == "responses" {
		body = withOutputText(body)
	}
	return body, call, nil
}

// answer replays r or asks the API. cached says no call was sent.
func (b *Broker) answer(ctx context.Context, r request) (body []byte, cached bool, ms float64, err error) {
	if body, ok := b.memo.get(r.key); ok {
		return body, true, 0, nil
	}
	if b.mode.reads() {
		e, ok, err := b.cache.get(r)
		if err != nil {
			return nil, false, 0, err
		}
		if ok {
			b.memo.put(r.key, e.Response)
			return e.Response, true, e.DurationMS, nil
		}
	}
	if b.cfg.Replay {
		return nil, false, 0, &grading.ModelCallError{Type: ErrCallNotRecorded,
			Message: fmt.Sprintf("this call (%s) was not recorded, and replays make no new calls", r.key)}
	}
	if b.client == nil {
		return nil, false, 0, fmt.Errorf("the judge cache has no reply for this ctx call (%s) and there is no OPENAI_API_KEY to ask the model: %w", r.key, errNoKey)
	}
	began := b.now()
	a, err := b.client.do(ctx, r)
	if err != nil {
		var apiErr *APIError
		if errors.As(err, &apiErr) && graderFault(apiErr.Status) {
			// The request the grader wrote is what the API refused: the
			// grader sees it, as the OpenAI SDK raises BadRequestError.
			return nil, false, 0, &grading.ModelCallError{Type: ErrCallRefused, Message: apiErr.Error()}
		}
		return nil, false, 0, fmt.Errorf("%s: %w", r.path, err)
	}
	ms = float64(b.now().Sub(began).Microseconds()) / 1000
	if !json.Valid(a.body) || !bytes.HasPrefix(bytes.TrimSpace(a.body), []byte("{")) {
		return nil, false, 0, fmt.Errorf("%s: %w: not a JSON object", r.path, errEnvelope)
	}
	b.mu.Lock()
	b.usage.Calls++
	b.usage.Retries += a.retries
	b.mu.Unlock()
	if b.mode.writes() {
		if err := b.cache.put(r, a.body, ms); err != nil {
			return nil, false, 0, err
		}
	}
	b.memo.put(r.key, compact(a.body))
	return a.body, false, ms, nil
}

// graderFault says whether an API status is the request's fault rather
// than the key's or the service's: 400, 404 (a model the grader named),
// 413, 422.
func graderFault(status int) bool {
	switch status {
	case http.StatusBadRequest, http.StatusNotFound, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity:
		return true
	}
	return false
}

// request builds the request of a call from the grader's keyword
// arguments: model="auto" (or none) resolved, stream and background forced
// off for responses. Keys are written sorted, so the same arguments give
// the same bytes and the same cache key.
func (b *Broker) request(kind string, args json.RawMessage) (request, string, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(args, &fields); err != nil || fields == nil {
		return request{}, "", &grading.ModelCallError{Type: ErrCallRefused, Message: "the call's keyword arguments are not a JSON object"}
	}
	path, auto, key := pathResponses, b.cfg.JudgeModel, "judge_model"
	if kind == "embeddings" {
		path, auto, key = pathEmbeddings, b.cfg.EmbeddingModel, "embedding_model"
	}
	var model string
	if raw, ok := fields["model"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &model); err != nil {
			return request{}, "", &grading.ModelCallError{Type: ErrCallRefused, Message: "model must be a string"}
		}
	}
	if model == "" || model == manifest.AutoModel {
		if auto == "" {
			return request{}, "", &grading.ModelCallError{Type: ErrCallRefused, Message: fmt.Sprintf(
				"model=%q needs %s at the top of the manifest (or pass an explicit model)", manifest.AutoModel, key)}
		}
		model = auto
	}
	fields["model"], _ = json.Marshal(model)
	if kind == "responses" {
		fields["stream"] = json.RawMessage("false")
		fields["background"] = json.RawMessage("false")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(fields); err != nil {
		return request{}, model, &grading.ModelCallError{Type: ErrCallRefused, Message: "the call's arguments: " + err.Error()}
	}
	body := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	return request{path: path, body: body, key: requestKey(path, body)}, model, nil
}

// callTokens reads the tokens a response reports: the responses API's
// input and output tokens, the embeddings API's prompt tokens.
func callTokens(body []byte) results.Tokens {
	var r struct {
		Usage *struct {
			InputTokens  int64 `json:"input_tokens"`
			OutputTokens int64 `json:"output_tokens"`
			PromptTokens int64 `json:"prompt_tokens"`
		} `json:"usage"`
	}
	if json.Unmarshal(body, &r) != nil || r.Usage == nil {
		return results.Tokens{}
	}
	return results.Tokens{Input: r.Usage.InputTokens + r.Usage.PromptTokens, Output: r.Usage.OutputTokens}
}

// withOutputText adds output_text to a responses body, as the OpenAI SDK
// computes it (the text of every output_text part of every message): the
// API does not send it, and graders read it.
func withOutputText(body []byte) []byte {
	var fields map[string]json.RawMessage
	if json.Unmarshal(body, &fields) != nil || fields == nil {
		return body
	}
	if _, ok := fields["output_text"]; ok {
		return body
	}
	env, err := parseEnvelope(pathResponses, body)
	if err != nil {
		return body
	}
	fields["output_text"], _ = json.Marshal(env.text)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(fields) != nil {
		return body
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
