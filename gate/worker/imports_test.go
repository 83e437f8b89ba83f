//go:build linux

package worker

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestWorkerStartsWithoutJSONModule: loading the worker imports neither
// json nor what json and signal bring (re, enum), which together are half
// of an interpreter's start, nor numbers, reprlib, select, struct or types,
// which it needs only now and then or not at all; a grader's own
// "import json" still gets the whole module.
func TestWorkerStartsWithoutJSONModule(t *testing.T) {
	py := python(t).Executable
	const list = "\nimport sys\nprint(' '.join(sorted(sys.modules)))\n"
	modules := func(src string) []string {
		t.Helper()
		out, err := exec.Command(py, "-I", "-B", "-c", src+list).Output()
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return strings.Fields(string(out))
	}
	bare := modules("")
	worker := modules(workerSource())
	for _, m := range []string{"json", "json.decoder", "re", "enum", "signal", "functools", "collections", "numbers", "reprlib", "select", "struct", "types"} {
		if slices.Contains(worker, m) && !slices.Contains(bare, m) {
			t.Errorf("the worker imports %s at start", m)
		}
	}
	if !slices.Contains(worker, "_json") {
		t.Errorf("the worker does not use json's C part: %v", worker)
	}
	out, err := exec.Command(py, "-I", "-B", "-c", workerSource()+`
import json, signal
print(json.dumps({"json": json.__name__, "handlers": type(signal.SIG_IGN).__name__}))
`).Output()
	if err != nil || !strings.Contains(string(out), `"json": "json"`) || !strings.Contains(string(out), `"handlers": "Handlers"`) {
		t.Errorf("a grader's json and signal: %s, %v", out, err)
	}
}

// TestLoadsJSONIsJSONLoads: the worker's own readers (loads_json, and
// loads_request for request lines) give json.loads's value, or
// json.loads's exception, over 60,000 random short texts and byte strings (JSON's characters, whitespace, look-alikes, NUL, byte order
// marks, UTF-16 and invalid UTF-8), and its copy is
// json.loads(json.dumps(value)).
func TestLoadsJSONIsJSONLoads(t *testing.T) {
	src := workerSource()
	const check = `
import json as real_json, random
rnd = random.Random(11)
alphabet = list(' \t\n\r\u00a0\ufeff\u00e9\ud800"{}[],:0123456789-+.eEtrufalsnNIiy\\x')
texts = ["1200", " 1 ", "NaN", "-Infinity", "Infinity ", "[]", "{}", '"a"', "tru", "1.", ".5", "01", "-", "[1,]", "1 2",
         '{"a": [1, 2.5e300, -0.0, "\\u00e9\\ud83d\\ude00", null, true]}', "\ufeff1", "", " ", '"\\ud800"']
texts += ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 8))) for _ in range(30000)]
datas = list(texts)
datas += [t.encode("utf-8", "surrogatepass") for t in texts[:20]]
datas += [b"\xef\xbb\xbf1", b"\xff\xfe1\x00", '{"a": 1}'.encode("utf-16"), '[1]'.encode("utf-16-le"), '[1]'.encode("utf-32-be"),
          b"\x00", b"1\x00", b"\x80", b'"\xc3\xa9"', b'"\xe9"', b"[1]\n", b"", bytearray(b'{"b": [null]}')]
for _ in range(30000):
    datas.append(bytes(rnd.choice(b' \t\n"{}[],:019-.eEtrufalsnNI\\\x00\xc3\xa9\xff') for _ in range(rnd.randint(1, 8))))

def outcome(f, data):
    try:
        return ("value", repr(f(data)))
    except Exception as exc:
        return ("error", type(exc).__name__, str(exc))

diffs = []
for data in datas:
    want, got = outcome(real_json.loads, data), outcome(loads_json, data)
    if want != got:
        diffs.append([repr(data), str(want), str(got)])
    if not isinstance(data, str):
        # The request reader's shortcut, on lines shaped like Go's and not.
        for line in (data, data + b"\n", b'{"id": ' + data + b"}\n", b"{" + data + b"\n"):
            want, got = outcome(real_json.loads, line), outcome(loads_request, line)
            if want != got:
                diffs.append([repr(line), str(want), str(got)])
for value in [{"a": [1, 2.5, None, True, "\u00e9"]}, [float("nan"), float("inf")], {"k": {"n": [[], {}]}}, "s", 3]:
    want, got = outcome(lambda v: real_json.loads(real_json.dumps(v)), value), outcome(json_copy, value)
    if want != got:
        diffs.append([repr(value), str(want), str(got)])
print(real_json.dumps({"checked": len(datas), "diffs": diffs[:5]}))
`
	got := workerCheck(t, src+check)
	if got.Checked < 60000 || len(got.Diffs) > 0 {
		t.Fatalf("checked %d inputs; differences from json.loads (input, json.loads, the worker's): %q", got.Checked, got.Diffs)
	}
}

// workerSource is worker.py without its closing main() call: its
// definitions, for a check to run after them.
func workerSource() string {
	return strings.TrimSuffix(strings.TrimSpace(workerPy), "main()")
}

// workerCheck runs code, which prints {"checked": N, "diffs": [...]} on
// stdout, with the test's interpreter, and returns what it printed.
func workerCheck(t *testing.T, code string) (got struct {
	Checked int        `json:"checked"`
	Diffs   [][]string `json:"diffs"`
}) {
	t.Helper()
	out, err := exec.Command(python(t).Executable, "-I", "-B", "-c", code).Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	return got
}
