package hosted

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gradegate/gradegate/manifest"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

func f64(v float64) *float64 { return &v }

const (
	positiveText = `{ "total_cents": 2599, "currency": "USD", "status": "approved" }`
	booleanText  = `{"status":"approved","currency":"USD","total_cents":true}`
	corruptText  = `{"status":"approved","currency":"USD","total_cents":2599}`
)

func canary(name, outputText, item string, expect *float64, expectError bool) manifest.Canary {
	s, _ := json.Marshal(map[string]string{"output_text": outputText})
	return manifest.Canary{Name: name, Sample: s, Item: json.RawMessage(item), Expect: expect, ExpectError: expectError}
}

func TestParityRows(t *testing.T) {
	const traceback = "Traceback (most recent call last):\n  File \"grader.py\", line 12, in grade\nKeyError: 'expected_total_cents'"
	tests := []struct {
		name            string
		canary          manifest.Canary
		local           []Local
		replies         []reply // for the canary's model_sample
		wantSample      string  // model_sample the service must receive
		wantFrom        string
		wantExpect      bool
		wantLocal       bool
		wantAttempts    int
		wantDetails     string
		wantProblemHas  string
		wantErr         bool
		wantNoteHas     string
		wantHostedNil   bool
		wantHostedError bool
		wantServiceFail bool
	}{
		{
			name:         "positive agrees everywhere",
			canary:       canary("equivalent-serialization", positiveText, `{"expected_currency":"USD","expected_total_cents":2599}`, f64(1), false),
			local:        []Local{{Name: "equivalent-serialization", Got: f64(1), Class: "ok"}},
			replies:      []reply{ok(1)},
			wantSample:   positiveText,
			wantFrom:     SampleOutputText,
			wantExpect:   true,
			wantLocal:    true,
			wantAttempts: 1,
		},
		{
			name:           "hosted disagrees with expect and local",
			canary:         canary("boolean-total-one-cent", booleanText, `{"expected_currency":"USD","expected_total_cents":1}`, f64(0), false),
			local:          []Local{{Name: "boolean-total-one-cent", Got: f64(0), Class: "ok"}},
			replies:        []reply{ok(1)},
			wantSample:     booleanText,
			wantFrom:       SampleOutputText,
			wantAttempts:   1,
			wantProblemHas: `canary "boolean-total-one-cent": expected reward 0; hosted returned 1; local returned 0; hosted returned 1`,
		},
		{
			name:            "expect_error and hosted runtime error agree",
			canary:          canary("corrupt-fixture", corruptText, `{"expected_currency":"USD"}`, nil, true),
			local:           []Local{{Name: "corrupt-fixture", Errored: true, Class: "grader_exception"}},
			replies:         []reply{raised(traceback)},
			wantSample:      corruptText,
			wantFrom:        SampleOutputText,
			wantExpect:      true,
			wantLocal:       true,
			wantAttempts:    1,
			wantDetails:     traceback,
			wantHostedError: true,
		},
		{
			name:           "expect_error but hosted returns a reward",
			canary:         canary("corrupt-fixture", corruptText, `{"expected_currency":"USD"}`, nil, true),
			local:          []Local{{Name: "corrupt-fixture", Errored: true, Class: "grader_exception"}},
			replies:        []reply{ok(1)},
			wantSample:     corruptText,
			wantFrom:       SampleOutputText,
			wantAttempts:   1,
			wantProblemHas: "expected the grader to raise; hosted returned reward 1; local errored (grader_exception); hosted returned reward 1",
		},
		{
			name:            "a hosted server error is the service failing, not a disagreement",
			canary:          canary("corrupt-fixture", corruptText, `{}`, nil, true),
			local:           []Local{{Name: "corrupt-fixture", Errored: true, Class: "grader_exception"}},
			replies:         []reply{{status: 200, body: runBody(0, map[string]any{"python_grader_server_error": true, "python_grader_server_error_type": "oom"})}},
			wantSample:      corruptText,
			wantFrom:        SampleOutputText,
			wantAttempts:    1,
			wantDetails:     "python_grader_server_error_type: oom",
			wantProblemHas:  "the hosted grader service failed",
			wantErr:         true,
			wantHostedNil:   true,
			wantServiceFail: true,
		},
		{
			name:            "a local timeout does not agree with a hosted runtime error",
			canary:          canary("slow", positiveText, `{}`, f64(1), false),
			local:           []Local{{Name: "slow", Errored: true, Class: "timeout"}},
			replies:         []reply{raised("MemoryError")},
			wantSample:      positiveText,
			wantFrom:        SampleOutputText,
			wantAttempts:    1,
			wantDetails:     "MemoryError",
			wantProblemHas:  "local errored (timeout), which agrees only with hosted unresponsive_reward_error; hosted flagged [python_grader_runtime_error]",
			wantHostedError: true,
		},
		{
			name:            "a local timeout agrees with a hosted unresponsive grader",
			canary:          canary("slow", positiveText, `{}`, nil, true),
			local:           []Local{{Name: "slow", Errored: true, Class: "timeout"}},
			replies:         []reply{{status: 200, body: runBody(0, map[string]any{"unresponsive_reward_error": true})}},
			wantSample:      positiveText,
			wantFrom:        SampleOutputText,
			wantLocal:       true,
			wantAttempts:    1,
			wantProblemHas:  "expected the grader to raise",
			wantHostedError: true,
		},
		{
			name:            "a local invalid return agrees with a hosted other_error",
			canary:          canary("bool-return", positiveText, `{}`, f64(1), false),
			local:           []Local{{Name: "bool-return", Errored: true, Class: "invalid_return"}},
			replies:         []reply{{status: 200, body: runBody(0, map[string]any{"other_error": true})}},
			wantSample:      positiveText,
			wantFrom:        SampleOutputText,
			wantLocal:       true,
			wantAttempts:    1,
			wantProblemHas:  "expected reward 1; hosted flagged [other_error]",
			wantHostedError: true,
		},
		{
			name:            "hosted raises where local scored",
			canary:          canary("positive", positiveText, `{}`, f64(1), false),
			local:           []Local{{Name: "positive", Got: f64(1), Class: "ok"}},
			replies:         []reply{raised("ModuleNotFoundError: No module named 'orjson'")},
			wantSample:      positiveText,
			wantFrom:        SampleOutputText,
			wantAttempts:    1,
			wantDetails:     "ModuleNotFoundError: No module named 'orjson'",
			wantProblemHas:  "hosted flagged [python_grader_runtime_error]; local did not error",
			wantHostedError: true,
		},
		{
			name:          "sample without output_text is not comparable and not sent",
			canary:        manifest.Canary{Name: "structured", Sample: json.RawMessage(`{"output_json": {"total_cents": 2599},  "choices": []}`), Item: json.RawMessage(`{}`), Expect: f64(1)},
			local:         []Local{{Name: "structured", Got: f64(1), Class: "ok"}},
			wantSample:    `{"output_json":{"total_cents":2599},"choices":[]}`,
			wantFrom:      SampleNotComparable,
			wantNoteHas:   "not comparable: the sample has no string output_text",
			wantHostedNil: true,
		},
		{
			name:          "a sample with more than output_text is not comparable",
			canary:        manifest.Canary{Name: "tools", Sample: json.RawMessage(`{"output_text": "ok", "output_tools": []}`), Item: json.RawMessage(`{}`), Expect: f64(1)},
			local:         []Local{{Name: "tools", Got: f64(1), Class: "ok"}},
			wantSample:    "ok",
			wantFrom:      SampleNotComparable,
			wantNoteHas:   "carries output_tools",
			wantHostedNil: true,
		},
		{
			name:          "an output_json that is not the text's parse is not comparable",
			canary:        manifest.Canary{Name: "mismatch", Sample: json.RawMessage(`{"output_text": "{\"a\": 1}", "output_json": {"a": 2}}`), Item: json.RawMessage(`{}`), Expect: f64(1)},
			local:         []Local{{Name: "mismatch", Got: f64(1), Class: "ok"}},
			wantSample:    `{"a": 1}`,
			wantFrom:      SampleNotComparable,
			wantNoteHas:   "output_json is not the parse",
			wantHostedNil: true,
		},
		{
			name:         "an output_json that is the text's parse is what the hosted grader derives",
			canary:       manifest.Canary{Name: "derived", Sample: json.RawMessage(`{"output_text": "{\"a\": 1}", "output_json": {"a": 1.0}}`), Item: json.RawMessage(`{}`), Expect: f64(1)},
			local:        []Local{{Name: "derived", Got: f64(1), Class: "ok"}},
			replies:      []reply{ok(1)},
			wantSample:   `{"a": 1}`,
			wantFrom:     SampleOutputText,
			wantExpect:   true,
			wantLocal:    true,
			wantAttempts: 1,
		},
		{
			name:         "tolerance applies to expect and local",
			canary:       manifest.Canary{Name: "fuzzy", Sample: json.RawMessage(`{"output_text": "fuzzy wuzzy was a bear"}`), Item: json.RawMessage(`{}`), Expect: f64(0.5), Tolerance: 0.01},
			local:        []Local{{Name: "fuzzy", Got: f64(0.495), Class: "ok"}},
			replies:      []reply{ok(0.505)},
			wantSample:   "fuzzy wuzzy was a bear",
			wantFrom:     SampleOutputText,
			wantExpect:   true,
			wantLocal:    true,
			wantAttempts: 1,
		},
		{
			name:           "within tolerance but on the wrong side of pass_threshold",
			canary:         manifest.Canary{Name: "near-pass", Sample: json.RawMessage(`{"output_text": "near"}`), Item: json.RawMessage(`{}`), Expect: f64(1), Tolerance: 0.1},
			local:          []Local{{Name: "near-pass", Got: f64(0.95), Class: "ok"}},
			replies:        []reply{ok(0.95)},
			wantSample:     "near",
			wantFrom:       SampleOutputText,
			wantLocal:      true,
			wantAttempts:   1,
			wantProblemHas: "hosted reward 0.95 is on the other side of pass_threshold 1 from expect 1",
		},
		{
			name:           "no local outcome for the canary",
			canary:         canary("positive", positiveText, `{}`, f64(1), false),
			local:          []Local{{Name: "some-other-canary", Got: f64(1)}},
			replies:        []reply{ok(1)},
			wantSample:     positiveText,
			wantFrom:       SampleOutputText,
			wantExpect:     true,
			wantAttempts:   1,
			wantProblemHas: "no local outcome to compare",
		},
		{
			name:         "one 500 then success keeps both attempts and agrees",
			canary:       canary("positive", positiveText, `{}`, f64(1), false),
			local:        []Local{{Name: "positive", Got: f64(1), Class: "ok"}},
			replies:      []reply{apiErr(500, "The server had an error while processing your request"), ok(1)},
			wantSample:   positiveText,
			wantFrom:     SampleOutputText,
			wantExpect:   true,
			wantLocal:    true,
			wantAttempts: 2,
		},
		{
			name:           "server down past every retry is an error, not a pass",
			canary:         canary("positive", positiveText, `{}`, f64(1), false),
			local:          []Local{{Name: "positive", Got: f64(1), Class: "ok"}},
			replies:        []reply{apiErr(503, "overloaded")},
			wantSample:     positiveText,
			wantFrom:       SampleOutputText,
			wantAttempts:   3,
			wantErr:        true,
			wantHostedNil:  true,
			wantProblemHas: "gave up after 3 attempts",
		},
		{
			name:           "run rejected with 400 is a finding, and keeps the param",
			canary:         canary("positive", positiveText, `{}`, f64(1), false),
			local:          []Local{{Name: "positive", Got: f64(1), Class: "ok"}},
			replies:        []reply{apiErrParam(400, "item is too large", "item")},
			wantSample:     positiveText,
			wantFrom:       SampleOutputText,
			wantAttempts:   1,
			wantHostedNil:  true,
			wantProblemHas: "item is too large [param item]",
		},
		{
			name:           "a 404 says the hosted graders are unavailable: a failure, not a finding",
			canary:         canary("positive", positiveText, `{}`, f64(1), false),
			local:          []Local{{Name: "positive", Got: f64(1), Class: "ok"}},
			replies:        []reply{apiErr(404, "Invalid URL (POST /v1/fine_tuning/alpha/graders/run)")},
			wantSample:     positiveText,
			wantFrom:       SampleOutputText,
			wantAttempts:   1,
			wantHostedNil:  true,
			wantErr:        true,
			wantProblemHas: "the hosted graders are unavailable",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t)
			f.onRun(tt.wantSample, tt.replies...)
			c := newTestClient(f, &sleeps{})
			g := Grader{Name: "order_summary_contract_v1", Source: trickySource, ImageTag: "2025-05-08"}

			rep, err := Parity(context.Background(), c, g, []manifest.Canary{tt.canary}, tt.local, 1.0)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Parity err = %v, wantErr %v", err, tt.wantErr)
			}
			if errors.Is(err, ErrServiceFailed) != tt.wantServiceFail {
				t.Errorf("Parity err = %v; want ErrServiceFailed %v", err, tt.wantServiceFail)
			}
			if strings.Contains(tt.name, "404") && !errors.Is(err, ErrUnavailable) {
				t.Errorf("Parity err = %v, want ErrUnavailable", err)
			}
			comparable := tt.wantFrom != SampleNotComparable
			if rep.Rows[0].Comparable != comparable || slices.Contains(rep.NotComparable, tt.canary.Name) == comparable {
				t.Errorf("comparable %v, not_comparable %v; want comparable %v", rep.Rows[0].Comparable, rep.NotComparable, comparable)
			}
			if len(rep.Rows) != 1 {
				t.Fatalf("rows = %d", len(rep.Rows))
			}
			row := rep.Rows[0]
			if row.AgreeExpect != tt.wantExpect || row.AgreeLocal != tt.wantLocal {
				t.Errorf("agree_expect=%v agree_local=%v, want %v %v (notes %q, error %q)", row.AgreeExpect, row.AgreeLocal, tt.wantExpect, tt.wantLocal, row.Notes, row.Error)
			}
			if len(row.Attempts) != tt.wantAttempts {
				t.Errorf("attempts = %+v, want %d", row.Attempts, tt.wantAttempts)
			}
			if row.SampleFrom != tt.wantFrom {
				t.Errorf("sample_from = %q, want %q", row.SampleFrom, tt.wantFrom)
			}
			if row.HostedErrorDetails != tt.wantDetails {
				t.Errorf("hosted_error_details = %q, want %q", row.HostedErrorDetails, tt.wantDetails)
			}
			if (row.Hosted == nil) != tt.wantHostedNil {
				t.Errorf("hosted = %+v, want nil %v", row.Hosted, tt.wantHostedNil)
			}
			if row.Hosted != nil && row.Hosted.Errored != tt.wantHostedError {
				t.Errorf("hosted errored = %v, want %v", row.Hosted.Errored, tt.wantHostedError)
			}
			if tt.wantNoteHas != "" && !strings.Contains(strings.Join(row.Notes, "\n"), tt.wantNoteHas) {
				t.Errorf("notes %q do not say %q", row.Notes, tt.wantNoteHas)
			}
			wantOK := tt.wantExpect && tt.wantLocal
			if rep.OK() != wantOK || (rep.Status == "pass") != wantOK {
				t.Errorf("OK() = %v, status %q, want ok %v; problems %q", rep.OK(), rep.Status, wantOK, rep.Problems)
			}
			if wantOK && len(rep.Problems) != 0 {
				t.Errorf("problems on an agreeing report: %q", rep.Problems)
			}
			if tt.wantProblemHas != "" {
				all := strings.Join(rep.Problems, "\n")
				if !strings.Contains(all, tt.wantProblemHas) || !strings.Contains(all, fmt.Sprintf("%q", tt.canary.Name)) {
					t.Errorf("problems %q do not name the canary and say %q", rep.Problems, tt.wantProblemHas)
				}
			}

			// The service received the pinned grader, the derived model_sample
			// and the canary's item, on every attempt.
			var runs int
			for _, r := range f.recorded() {
				if !strings.HasSuffix(r.Path, "/run") {
					continue
				}
				runs++
				var got wireRequest
				if err := json.Unmarshal(r.Body, &got); err != nil {
					t.Fatal(err)
				}
				if deref(got.Grader.Source) != trickySource || deref(got.Grader.ImageTag) != "2025-05-08" || deref(got.Grader.Type) != "python" || deref(got.Grader.Name) != g.Name {
					t.Errorf("grader on the wire = %s", r.Body)
				}
				if deref(got.ModelSample) != tt.wantSample {
					t.Errorf("model_sample = %q, want %q", deref(got.ModelSample), tt.wantSample)
				}
				if !jsonEqual(t, got.Item, tt.canary.Item) {
					t.Errorf("item = %s, want %s", got.Item, tt.canary.Item)
				}
			}
			if runs != tt.wantAttempts {
				t.Errorf("service saw %d runs, want %d", runs, tt.wantAttempts)
			}
		})
	}
}

func TestParityValidateRejected(t *testing.T) {
	f := newFake(t)
	f.onValidate(apiErr(400, "Python grader source must define grade(sample, item)"))
	c := newTestClient(f, &sleeps{})
	canaries := []manifest.Canary{canary("positive", positiveText, `{}`, f64(1), false)}
	rep, err := Parity(context.Background(), c, Grader{Name: "g", Source: "def grade(x):\n    return 1.0\n"}, canaries, []Local{{Name: "positive", Got: f64(1)}}, 1)
	if err != nil {
		t.Fatalf("a rejected grader is a finding, not a tool failure: %v", err)
	}
	if rep.OK() || rep.Validate.OK || rep.Status != "fail" {
		t.Fatalf("report OK after a rejected validation: %+v", rep)
	}
	if !strings.Contains(rep.Validate.Error, "must define grade(sample, item)") || !strings.Contains(rep.Validate.Error, "400") {
		t.Errorf("validate error = %q", rep.Validate.Error)
	}
	if len(rep.Rows) != 1 || rep.Rows[0].Hosted != nil || !strings.Contains(rep.Rows[0].Error, "not run") {
		t.Errorf("rows = %+v, want the canary listed as not run", rep.Rows)
	}
	for _, r := range f.recorded() {
		if strings.HasSuffix(r.Path, "/run") {
			t.Errorf("ran a canary with a grader the service rejected")
		}
	}
	var out bytes.Buffer
	if err := rep.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "validate: FAILED: hosted validate: HTTP 400 invalid_request_error: Python grader source must define grade(sample, item)") {
		t.Errorf("text does not report the validation failure clearly:\n%s", out.String())
	}
}

func TestParityValidateUnavailable(t *testing.T) {
	f := newFake(t)
	f.onValidate(apiErr(401, "Incorrect API key provided"))
	rep, err := Parity(context.Background(), newTestClient(f, &sleeps{}), Grader{Name: "g", Source: "x"}, []manifest.Canary{canary("p", "x", `{}`, f64(1), false)}, nil, 1)
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 401 {
		t.Fatalf("err = %v, want the 401", err)
	}
	if rep == nil || rep.OK() {
		t.Fatalf("report = %+v, want a failing report alongside the error", rep)
	}
}

func TestParityNoCanariesIsNotOK(t *testing.T) {
	f := newFake(t)
	rep, err := Parity(context.Background(), newTestClient(f, &sleeps{}), Grader{Name: "g", Source: "x"}, nil, nil, 1)
	if err != nil || rep.OK() {
		t.Errorf("OK() = %v, err %v; want a failing report", rep.OK(), err)
	}
}

// TestKeyNeverLeaks forces every failure path, with a service that echoes
// the key back in error bodies, headers and grader details, and checks that
// the key appears in no error, no attempt, no report JSON and no text.
func TestKeyNeverLeaks(t *testing.T) {
	f := newFake(t)
	echo := "Incorrect API key provided: " + testKey
	f.onValidate(reply{status: 500, header: map[string]string{"x-request-id": "req_" + testKey}, body: `{"error": {"message": "` + echo + `", "type": "` + testKey + `", "code": "` + testKey + `"}}`}, reply{status: 200, body: `{}`})
	f.onRun("leak-401", apiErr(401, echo))
	f.onRun("leak-500", reply{status: 502, body: "upstream said: Bearer " + testKey})
	f.onRun("leak-details", raised("Traceback: os.environ['OPENAI_API_KEY'] == '"+testKey+"'"))
	f.onRun("leak-hangup", reply{hangup: true})

	c := newTestClient(f, &sleeps{})
	var canaries []manifest.Canary
	for _, n := range []string{"leak-401", "leak-500", "leak-details", "leak-hangup"} {
		canaries = append(canaries, canary(n, n, `{}`, f64(1), false))
	}
	rep, err := Parity(context.Background(), c, Grader{Name: "g", Source: "x"}, canaries, nil, 1)
	if err == nil {
		t.Fatal("want an error from the failing service")
	}
	if rep.OK() {
		t.Fatal("report OK although every canary failed")
	}
	_, verr := c.Run(context.Background(), Grader{Name: "g", Source: "x"}, "leak-401", nil)

	// The key was sent, so the test is not vacuous.
	var sent bool
	for _, r := range f.recorded() {
		sent = sent || r.Authorization == "Bearer "+testKey
	}
	if !sent {
		t.Fatal("the key was never sent")
	}

	js, jerr := json.Marshal(rep)
	if jerr != nil {
		t.Fatal(jerr)
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	places := map[string]string{
		"Parity error":    err.Error(),
		"Run error":       verr.Error(),
		"report JSON":     string(js),
		"report text":     text.String(),
		"attempts %+v":    fmt.Sprintf("%+v", rep.Rows),
		"client %v":       fmt.Sprintf("%v", c),
		"client %+v":      fmt.Sprintf("%+v", c),
		"client %#v":      fmt.Sprintf("%#v", c),
		"validate report": fmt.Sprintf("%+v", rep.Validate),
	}
	for where, s := range places {
		if strings.Contains(s, testKey) {
			t.Errorf("the API key leaks into the %s:\n%s", where, s)
		}
	}
	if !strings.Contains(string(js), redacted) {
		t.Errorf("the echoed key was not visibly redacted:\n%s", js)
	}
}

func TestReportJSONShape(t *testing.T) {
	f := newFake(t)
	f.onRun(positiveText, ok(1))
	rep, err := Parity(context.Background(), newTestClient(f, &sleeps{}), Grader{Name: "g", Source: trickySource, ImageTag: "2025-05-08"},
		[]manifest.Canary{canary("positive", positiveText, `{}`, f64(1), false)}, []Local{{Name: "positive", Got: f64(1), Class: "ok"}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(js, &got); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(trickySource))
	if got["schema"] != "gradegate.hosted/v1" || got["status"] != "pass" {
		t.Errorf("schema/status = %v %v", got["schema"], got["status"])
	}
	if diff := cmp.Diff(map[string]any{"type": "python", "name": "g", "image_tag": "2025-05-08", "sha256": hex.EncodeToString(sum[:])}, got["grader"]); diff != "" {
		t.Errorf("grader (-want +got):\n%s", diff)
	}
	row := got["canaries"].([]any)[0].(map[string]any)
	for _, k := range []string{"name", "expect", "local", "hosted", "agree_expect", "agree_local", "attempts", "sample_from"} {
		if _, ok := row[k]; !ok {
			t.Errorf("row has no %q: %v", k, row)
		}
	}
	a := row["attempts"].([]any)[0].(map[string]any)
	for _, k := range []string{"endpoint", "status", "duration_ms"} {
		if _, ok := a[k]; !ok {
			t.Errorf("attempt has no %q: %v", k, a)
		}
	}
}

// TestWriteText renders a report with every kind of row against
// testdata/parity.golden (go test -update rewrites it).
func TestWriteText(t *testing.T) {
	f := newFake(t)
	f.onRun(positiveText, apiErr(500, "The server had an error"), ok(1))
	f.onRun(booleanText, ok(1))
	f.onRun(corruptText, raised("Traceback (most recent call last):\n  File \"grader.py\", line 12, in grade\n\texpected = item[\"expected_total_cents\"]\nKeyError: 'expected_total_cents'"))
	f.onRun(`{"output_json":{"total_cents":2599}}`, ok(0.5))
	canaries := []manifest.Canary{
		canary("equivalent-serialization", positiveText, `{"expected_currency":"USD","expected_total_cents":2599}`, f64(1), false),
		canary("boolean-total-one-cent", booleanText, `{"expected_currency":"USD","expected_total_cents":1}`, f64(0), false),
		canary("corrupt-fixture", corruptText, `{"expected_currency":"USD"}`, nil, true),
		{Name: "structured-output", Sample: json.RawMessage(`{"output_json": {"total_cents": 2599}}`), Item: json.RawMessage(`{}`), Expect: f64(0.5), Tolerance: 0.05},
	}
	local := []Local{
		{Name: "equivalent-serialization", Got: f64(1), Class: "ok"},
		{Name: "boolean-total-one-cent", Got: f64(0), Class: "ok"},
		{Name: "corrupt-fixture", Errored: true, Class: "grader_exception"},
		{Name: "structured-output", Got: f64(0.5), Class: "ok"},
	}
	rep, err := Parity(context.Background(), newTestClient(f, &sleeps{}), Grader{Name: "order_summary_contract_v1", Source: trickySource, ImageTag: "2025-05-08"}, canaries, local, 1)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := rep.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	got := strings.ReplaceAll(out.String(), f.baseURL(), "BASE")
	golden := filepath.Join("testdata", "parity.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("WriteText (-want +got):\n%s", diff)
	}
}

// TestParityNotComparableIsNotAgreement checks that a canary the hosted
// grader cannot be given counts neither way: beside an agreeing canary the
// report passes and names it; alone it proves nothing and the report fails.
func TestParityNotComparableIsNotAgreement(t *testing.T) {
	tools := manifest.Canary{Name: "tools", Sample: json.RawMessage(`{"output_tools": []}`), Item: json.RawMessage(`{}`), Expect: f64(0)}
	pos := canary("positive", positiveText, `{}`, f64(1), false)
	local := []Local{{Name: "positive", Got: f64(1), Class: "ok"}, {Name: "tools", Got: f64(0), Class: "ok"}}

	f := newFake(t)
	f.onRun(positiveText, ok(1))
	rep, err := Parity(context.Background(), newTestClient(f, &sleeps{}), Grader{Name: "g", Source: "x"}, []manifest.Canary{pos, tools}, local, 1)
	if err != nil || !rep.OK() || !slices.Equal(rep.NotComparable, []string{"tools"}) || rep.Rows[1].Status != RowNotComparable {
		t.Errorf("err %v OK %v not comparable %v rows %+v", err, rep.OK(), rep.NotComparable, rep.Rows)
	}
	var out bytes.Buffer
	if err := rep.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "parity: pass (1 canary agree; 1 not comparable: tools)") {
		t.Errorf("text does not name the canary that was not compared:\n%s", out.String())
	}

	rep, err = Parity(context.Background(), newTestClient(newFake(t), &sleeps{}), Grader{Name: "g", Source: "x"}, []manifest.Canary{tools}, local, 1)
	if err != nil || rep.OK() || !strings.Contains(strings.Join(rep.Problems, "\n"), "no canary could be compared") {
		t.Errorf("only incomparable canaries: err %v OK %v problems %q", err, rep.OK(), rep.Problems)
	}
}

func TestParityValidate404IsUnavailable(t *testing.T) {
	f := newFake(t)
	f.onValidate(apiErr(404, "Invalid URL (POST /v1/fine_tuning/alpha/graders/validate)"))
	rep, err := Parity(context.Background(), newTestClient(f, &sleeps{}), Grader{Name: "g", Source: "x"}, []manifest.Canary{canary("p", "x", `{}`, f64(1), false)}, nil, 1)
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable (exit 3), not a rejected grader", err)
	}
	if rep.OK() || !strings.Contains(rep.Rows[0].Error, "unavailable") {
		t.Errorf("report %+v", rep.Rows)
	}
	for _, r := range f.recorded() {
		if strings.HasSuffix(r.Path, "/run") {
			t.Error("ran a canary against unavailable graders")
		}
	}
}
