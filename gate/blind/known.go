package blind

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/manifest"
)

// The built-in negatives on a real case's id: a grader that carries the
// dataset's ids (or hashes of them: the author of a pull request has the
// dataset) and is lenient only on ids it knows would pass every canary
// whose id is drawn. These carry a real row's id and item, as the case
// does, with an answer the gate knows must fail.
const (
	KnownIDRefusal   = "builtin-known-id-refusal"
	KnownIDEmpty     = "builtin-known-id-empty-answer"
	KnownIDTruncated = "builtin-known-id-truncated-json"
)

// KnownIDCanaries are the built-in negatives of m sent on a real case's id
// and item: a refusal, an empty answer and, when the first positive
// canary's answer is a JSON object or array, that answer cut in half (no
// longer JSON). Each must score below pass_threshold or make the grader
// raise. None when the built-in negatives are switched off or m's grader
// is a model grader. Written here they carry the first positive canary's
// item, for a run that reads no row.
func KnownIDCanaries(m *manifest.Manifest) []manifest.Canary {
	if m.Gate.BuiltinCanaries.Off || m.Grader.Judge != nil {
		return nil
	}
	var pos *manifest.Canary
	for k, c := range m.Canaries {
		if c.Positive(m.Grader.PassThreshold) {
			pos = &m.Canaries[k]
			break
		}
	}
	mk := func(name, text string) manifest.Canary {
		t, _ := json.Marshal(text)
		c := manifest.Canary{Name: name, Sample: json.RawMessage(`{"output_text":` + string(t) + `}`)}
		if pos != nil {
			c.Item = pos.Item
		}
		return c
	}
	out := []manifest.Canary{mk(KnownIDRefusal, RefusalAnswer), mk(KnownIDEmpty, "")}
	if pos != nil {
		if cut, ok := truncatedJSON(outputText(pos.Sample)); ok {
			out = append(out, mk(KnownIDTruncated, cut))
		}
	}
	return out
}

// truncatedJSON is text cut in half when text is a JSON object or array
// whose first half is no JSON at all; false otherwise.
func truncatedJSON(text string) (string, bool) {
	trim := strings.TrimSpace(text)
	if len(trim) < 4 || (trim[0] != '{' && trim[0] != '[') || !json.Valid([]byte(trim)) {
		return "", false
	}
	cut := trim[:len(trim)/2]
	for len(cut) > 0 && !utf8.ValidString(cut) {
		cut = cut[:len(cut)-1]
	}
	if len(cut) < 2 || json.Valid([]byte(cut)) {
		return "", false
	}
	return cut, true
}

// knownIDMessage says which real case's id a known-id canary carried.
func knownIDMessage(cr results.CanaryResult, id string) string {
	if cr.Status == results.StatusPass {
		return "holds: a wrong answer on a real case's id and item does not pass"
	}
	answer := "the answer " + strconvQuote(cr.Variant)
	if !strings.HasPrefix(cr.Message, answer) {
		return cr.Message
	}
	return answer + " on the id and item of case " + strconvQuote(id) + cr.Message[len(answer):]
}
