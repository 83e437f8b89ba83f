// Package judgetest is an httptest fake of OpenAI's chat completions and
// responses endpoints, for the tests of packages that ask model graders.
package judgetest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// Key is the API key the fake expects; a request with another counts in
// BadAuth.
const Key = "sk-test-judgetest-SECRET"

// prefix is where the fake is mounted, as a proxy would mount it.
const prefix = "/proxy/openai/v1"

// Fake answers each request with the text answer gives for its prompt
// (every message's content, one per line).
type Fake struct {
	srv      *httptest.Server
	answer   func(prompt string) string
	requests atomic.Int64
	badAuth  atomic.Int64
}

// New starts a fake that t stops.
func New(t testing.TB, answer func(prompt string) string) *Fake {
	t.Helper()
	f := &Fake{answer: answer}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+prefix+"/chat/completions", f.handle)
	mux.HandleFunc("POST "+prefix+"/responses", f.handle)
	mux.HandleFunc("POST "+prefix+"/embeddings", f.handle)
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

// URL is the base URL to give as OPENAI_BASE_URL.
func (f *Fake) URL() string { return f.srv.URL + prefix }

// Close stops the fake: later calls cannot connect.
func (f *Fake) Close() { f.srv.Close() }

// Requests counts the requests received.
func (f *Fake) Requests() int { return int(f.requests.Load()) }

// BadAuth counts the requests without Key.
func (f *Fake) BadAuth() int { return int(f.badAuth.Load()) }

// Score is the structured reply a score_model asks for.
func Score(v float64) string { return fmt.Sprintf(`{"steps": [], "result": %g}`, v) }

// Label is the structured reply a label_model asks for.
func Label(l string) string {
	b, _ := json.Marshal(map[string]any{"steps": []any{}, "result": l})
	return string(b)
}

func (f *Fake) handle(w http.ResponseWriter, r *http.Request) {
	f.requests.Add(1)
	if r.Header.Get("Authorization") != "Bearer "+Key {
		f.badAuth.Add(1)
	}
	var body struct {
		Model    string `json:"model"`
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
		// Input is the responses API's: a string, or messages.
		Input json.RawMessage `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	if strings.HasSuffix(r.URL.Path, "/embeddings") {
		f.embeddings(w, body.Model, body.Input)
		return
	}
	msgs := body.Messages
	responses := strings.HasSuffix(r.URL.Path, "/responses")
	var prompt strings.Builder
	if responses {
		var text string
		if json.Unmarshal(body.Input, &text) == nil {
			prompt.WriteString(text + "\n")
		} else if json.Unmarshal(body.Input, &msgs) != nil {
			http.Error(w, `{"error":{"message":"input is neither a string nor messages"}}`, http.StatusBadRequest)
			return
		}
	}
	for _, m := range msgs {
		prompt.WriteString(m.Content + "\n")
	}
	text, _ := json.Marshal(f.answer(prompt.String()))
	w.Header().Set("Content-Type", "application/json")
	if responses {
		fmt.Fprintf(w, `{"id":"resp_1","object":"response","model":%q,"output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":%s,"annotations":[]}]}],"usage":{"input_tokens":40,"output_tokens":7,"total_tokens":47}}`, body.Model, text)
		return
	}
	fmt.Fprintf(w, `{"id":"chatcmpl-1","object":"chat.completion","model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":%s,"refusal":null},"finish_reason":"stop"}],"usage":{"prompt_tokens":40,"completion_tokens":7,"total_tokens":47}}`, body.Model, text)
}

// Embedding is the fake's embedding of a text: how often each letter a to
// z occurs, so texts with the same letters are close under cosine.
func Embedding(text string) []float64 {
	v := make([]float64, 26)
	for _, c := range strings.ToLower(text) {
		if c >= 'a' && c <= 'z' {
			v[c-'a']++
		}
	}
	return v
}

// embeddings answers POST /embeddings: input is a string or a list of them.
func (f *Fake) embeddings(w http.ResponseWriter, model string, input json.RawMessage) {
	var texts []string
	var one string
	if json.Unmarshal(input, &one) == nil {
		texts = []string{one}
	} else if json.Unmarshal(input, &texts) != nil {
		http.Error(w, `{"error":{"message":"input must be a string or a list of strings"}}`, http.StatusBadRequest)
		return
	}
	data := make([]map[string]any, len(texts))
	tokens := 0
	for i, t := range texts {
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": Embedding(t)}
		tokens += len(strings.Fields(t))
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": model,
		"usage": map[string]any{"prompt_tokens": tokens, "total_tokens": tokens}})
}
