package render

import "strings"

// ErrorLines flattens a joined error into one line per problem.
func ErrorLines(err error) []string {
	var lines []string
	for _, e := range Problems(err) {
		lines = append(lines, strings.ReplaceAll(e.Error(), "\n", "\n  "))
	}
	return lines
}

// Problems are the leaves of a joined error: each independent problem once.
func Problems(err error) []error {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		if err == nil {
			return nil
		}
		return []error{err}
	}
	var out []error
	for _, x := range j.Unwrap() {
		out = append(out, Problems(x)...)
	}
	return out
}
