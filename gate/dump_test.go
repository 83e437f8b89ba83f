package gate

import "encoding/json"

func ptr[T any](v T) *T { return &v }

func dump(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}
