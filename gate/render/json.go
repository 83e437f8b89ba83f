package render

import (
	"encoding/json"
	"fmt"
	"io"
)

// JSON writes v as indented JSON followed by a newline. HTML characters stay
// as they are: "<lambda>" in a grader's error message reads as written.
func JSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("render: writing JSON: %w", err)
	}
	return nil
}
