package multi

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// debianWordNet is where Debian's wordnet-base installs WordNet 3.0, the
// version of NLTK's own wordnet corpus.
const debianWordNet = "/usr/share/wordnet"

// lexnames are WordNet 3.0's lexicographer files in number order. NLTK's
// reader needs the lexnames file, which Debian's wordnet-base leaves out;
// meteor reads only synonyms, never these names.
var lexnames = strings.Fields(`adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact
	noun.attribute noun.body noun.cognition noun.communication noun.event noun.feeling noun.food
	noun.group noun.location noun.motive noun.object noun.person noun.phenomenon noun.plant
	noun.possession noun.process noun.quantity noun.relation noun.shape noun.state noun.substance
	noun.time verb.body verb.change verb.cognition verb.communication verb.competition
	verb.consumption verb.contact verb.creation verb.emotion verb.motion verb.perception
	verb.possession verb.social verb.stative verb.weather adj.ppl`)

// nltkData builds an NLTK data directory whose wordnet corpus is Debian's
// WordNet files, or skips the test when nltk or those files are missing
// (apt-get install python3-nltk wordnet-base).
func nltkData(t *testing.T) string {
	t.Helper()
	if err := exec.Command("/usr/bin/python3", "-c", "import nltk").Run(); err != nil {
		t.Skip("/usr/bin/python3 cannot import nltk (apt-get install python3-nltk)")
	}
	files, _ := filepath.Glob(filepath.Join(debianWordNet, "*"))
	if len(files) == 0 {
		t.Skip("no WordNet files in " + debianWordNet + " (apt-get install wordnet-base)")
	}
	dir := t.TempDir()
	corpus := filepath.Join(dir, "corpora", "wordnet")
	if err := os.MkdirAll(corpus, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil && fi.Mode().IsRegular() {
			if err := os.Symlink(f, filepath.Join(corpus, filepath.Base(f))); err != nil {
				t.Fatal(err)
			}
		}
	}
	var b strings.Builder
	category := map[string]int{"noun": 1, "verb": 2, "adj": 3, "adv": 4}
	for i, n := range lexnames {
		pos, _, _ := strings.Cut(n, ".")
		fmt.Fprintf(&b, "%02d\t%s\t%d\n", i, n, category[pos])
	}
	if err := os.WriteFile(filepath.Join(corpus, "lexnames"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// meteorDriver loads MeteorSource as the worker would (compiled under its
// file name) and grades the items given as JSON, or prints the load error.
const meteorDriver = `
import json, sys
ns = {}
try:
    exec(compile(sys.stdin.read(), "gradegate_meteor.py", "exec"), ns)
except ImportError as e:
    print(json.dumps({"load_error": "%s: %s" % (type(e).__name__, e)}))
    sys.exit(0)
print(json.dumps({"scores": [ns["grade"]({}, item) for item in json.loads(sys.argv[1])]}))
`

type meteorRun struct {
	Scores    []float64 `json:"scores"`
	LoadError string    `json:"load_error"`
}

func runMeteor(t *testing.T, nltkData string, items []map[string]string) meteorRun {
	t.Helper()
	arg, _ := json.Marshal(items)
	cmd := exec.Command("/usr/bin/python3", "-I", "-c", meteorDriver, string(arg))
	cmd.Env = []string{"NLTK_DATA=" + nltkData}
	cmd.Stdin = strings.NewReader(string(MeteorSource))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v", err)
	}
	var r meteorRun
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("driver output %q: %v", out, err)
	}
	return r
}

// TestMeteorSource computes meteor with real nltk and WordNet: nltk's own
// docstring example, a WordNet synonym (auto for car) that exact and stem
// matching alone would miss, and no match at all.
func TestMeteorSource(t *testing.T) {
	data := nltkData(t)
	tests := []struct {
		name, input, reference string
		want                   float64
	}{
		// nltk.translate.meteor_score's docstring: 0.6944 for hypothesis1.
		{"nltk docstring", "It is a guide to action which ensures that the military always obeys the commands of the party",
			"It is a guide to action that ensures that the military will forever heed Party commands", 0.6944444444444445},
		{"synonym", "the auto stopped", "the car stopped", 0.9814814814814815},
		{"not a synonym", "the pear stopped", "the car stopped", 1.0 / 3},
		{"no match", "non matching hypothesis", "this is a cat", 0},
	}
	items := make([]map[string]string, len(tests))
	for i, tt := range tests {
		items[i] = map[string]string{"input": tt.input, "reference": tt.reference}
	}
	r := runMeteor(t, data, items)
	if r.LoadError != "" || len(r.Scores) != len(tests) {
		t.Fatalf("meteor did not run: %+v", r)
	}
	for i, tt := range tests {
		if math.Abs(r.Scores[i]-tt.want) > 1e-9 {
			t.Errorf("%s: meteor %v, want %v", tt.name, r.Scores[i], tt.want)
		}
	}
}

// TestMeteorSourceWithoutWordNet: with nltk but no WordNet data, loading
// fails with an ImportError that names what is missing.
func TestMeteorSourceWithoutWordNet(t *testing.T) {
	nltkData(t)
	r := runMeteor(t, t.TempDir(), nil)
	if r.LoadError == "" {
		t.Skip("WordNet is on one of NLTK's default paths here")
	}
	if !strings.Contains(r.LoadError, "ImportError: nltk is installed but its WordNet data is not") {
		t.Errorf("load error %q", r.LoadError)
	}
}
