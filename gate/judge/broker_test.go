package judge_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/judge"
	"github.com/gradegate/gradegate/gate/judge/judgetest"
)

func newBroker(url, key string, cache *judge.Cache, mode judge.CacheMode, replay bool) *judge.Broker {
	return judge.NewBroker(judge.BrokerConfig{
		Config:     judge.Config{BaseURL: url, APIKey: key, HTTPClient: &http.Client{}, Cache: cache, CacheMode: mode},
		JudgeModel: "gpt-4.1-mini-2025-04-14", EmbeddingModel: "text-embedding-3-small", Replay: replay,
	})
}

// TestBrokerRecordReplay: a ctx call goes to the API with model="auto"
// resolved and stream forced off, is recorded, and replays offline (no
// key, the fake closed) with the same response; a replay-only broker
// refuses a call never recorded, inside the grader.
func TestBrokerRecordReplay(t *testing.T) {
	fake := judgetest.New(t, func(prompt string) string { return `{"verdict":"correct"}` })
	cache := &judge.Cache{Dir: t.TempDir()}
	ctx := context.Background()
	args := json.RawMessage(`{"model":"auto","input":"Question: 2+2?","temperature":0,"stream":true}`)

	rec := newBroker(fake.URL(), judgetest.Key, cache, judge.CacheReadWrite, false)
	body, call, err := rec.Call(ctx, "responses", args)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		OutputText string `json:"output_text"`
		Model      string `json:"model"`
	}
	if err := json.Unmarshal(body, &got); err != nil || got.OutputText != `{"verdict":"correct"}` || got.Model != "gpt-4.1-mini-2025-04-14" {
		t.Fatalf("response %s (%v)", body, err)
	}
	if call.Cached || call.InputTokens != 40 || call.OutputTokens != 7 || call.Model != "gpt-4.1-mini-2025-04-14" || call.Request == "" {
		t.Errorf("call %+v", call)
	}
	emb, ecall, err := rec.Call(ctx, "embeddings", json.RawMessage(`{"input":["abc","abd"]}`))
	if err != nil || !strings.Contains(string(emb), `"embedding"`) || ecall.Model != "text-embedding-3-small" {
		t.Fatalf("embeddings %s %+v %v", emb, ecall, err)
	}
	if u := rec.Usage(); u.Calls != 2 || u.Tokens.Input != 42 || u.Tokens.Output != 7 {
		t.Errorf("usage %+v", u)
	}
	if fake.BadAuth() != 0 || fake.Requests() != 2 {
		t.Errorf("requests %d, bad auth %d", fake.Requests(), fake.BadAuth())
	}
	fake.Close()

	// Offline: no key, no network; the cache answers the same bytes.
	for _, replay := range []bool{false, true} {
		off := newBroker("http://127.0.0.1:1", "", cache, judge.CacheRead, replay)
		again, c2, err := off.Call(ctx, "responses", json.RawMessage(`{"input":"Question: 2+2?","stream":false,"temperature":0}`))
		if err != nil {
			t.Fatalf("replay=%v: %v", replay, err)
		}
		if string(again) != string(body) || !c2.Cached || c2.Request != call.Request {
			t.Errorf("replay=%v: %s %+v, want %s", replay, again, c2, body)
		}
		if u := off.Usage(); u.Calls != 0 || u.Cached != 1 || u.CachedTokens.Input != 40 {
			t.Errorf("replay=%v: usage %+v", replay, u)
		}
	}

	var mce *grading.ModelCallError
	_, _, err = newBroker("", "", cache, judge.CacheRead, true).Call(ctx, "responses", json.RawMessage(`{"input":"never asked"}`))
	if !errors.As(err, &mce) || mce.Type != judge.ErrCallNotRecorded {
		t.Errorf("replay of an unrecorded call: %v", err)
	}
	_, _, err = newBroker("", "", cache, judge.CacheRead, false).Call(ctx, "responses", json.RawMessage(`{"input":"never asked"}`))
	if err == nil || errors.As(err, &mce) || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Errorf("a miss without a key must fail the run: %v", err)
	}
}

// TestBrokerRefusals: what the grader got wrong is an exception in the
// grader (no auto model in the manifest, a request the API refuses with
// 400); the key never reaches an error.
func TestBrokerRefusals(t *testing.T) {
	srv := judgetest.New(t, func(string) string { return "x" })
	ctx := context.Background()
	b := judge.NewBroker(judge.BrokerConfig{Config: judge.Config{BaseURL: srv.URL(), APIKey: judgetest.Key, HTTPClient: &http.Client{}}})
	tests := []struct {
		name, kind, args, want string
	}{
		{"no judge_model", "responses", `{"model":"auto","input":"x"}`, "judge_model"},
		{"no embedding_model", "embeddings", `{"input":"x"}`, "embedding_model"},
		{"not an object", "responses", `[1]`, "not a JSON object"},
		{"API refuses", "responses", `{"model":"m","input":{"bad":1}}`, "HTTP 400"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := b.Call(ctx, tt.kind, json.RawMessage(tt.args))
			var mce *grading.ModelCallError
			if !errors.As(err, &mce) || !strings.Contains(mce.Message, tt.want) || strings.Contains(err.Error(), judgetest.Key) {
				t.Errorf("err %v, want a ModelCallError with %q", err, tt.want)
			}
		})
	}
}

// BenchmarkBrokerCall is the gate's cost of one ctx call: asked of the
// fake endpoint (cache off), and replayed from the judge cache.
func BenchmarkBrokerCall(b *testing.B) {
	fake := judgetest.New(b, func(string) string { return `{"verdict":"correct"}` })
	ctx := context.Background()
	args := json.RawMessage(`{"model":"auto","input":"Question: 2+2?\nReference: 4\nPrediction: 4","temperature":0}`)
	b.Run("fake-endpoint", func(b *testing.B) {
		br := newBroker(fake.URL(), judgetest.Key, nil, judge.CacheOff, false)
		for b.Loop() {
			if _, _, err := br.Call(ctx, "responses", args); err != nil {
				b.Fatal(err)
			}
		}
	})
	cache := &judge.Cache{Dir: b.TempDir()}
	if _, _, err := newBroker(fake.URL(), judgetest.Key, cache, judge.CacheWrite, false).Call(ctx, "responses", args); err != nil {
		b.Fatal(err)
	}
	b.Run("replayed", func(b *testing.B) {
		br := newBroker("", "", cache, judge.CacheRead, false)
		for b.Loop() {
			if _, _, err := br.Call(ctx, "responses", args); err != nil {
				b.Fatal(err)
			}
		}
	})
}
