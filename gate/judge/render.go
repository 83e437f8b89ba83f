package judge

import "encoding/json"

// Render fills text's {{sample.…}} and {{item.…}} templates from a task's
// sample and item, as a model grader's prompt is filled: a string as
// itself, anything else as compact JSON. A value that is not there is a
// *TemplateError.
func Render(text string, sample, item json.RawMessage) (string, error) {
	v, err := decodeVars(sample, item)
	if err != nil {
		return "", err
	}
	return render(text, v)
}
