package manifest

// Suggest returns " (did you mean X?)" naming the one of known closest to
// name, when one is close enough to be what the user meant, and "" otherwise:
// the hint an unknown key gets, for names that only the data can tell (a
// slice in gate.slices against the dataset's slices).
func Suggest(name string, known []string) string {
	return suggest(name, known)
}

// EditDistance is the Levenshtein distance between a and b, in bytes.
func EditDistance(a, b string) int {
	return editDistance(a, b)
}
