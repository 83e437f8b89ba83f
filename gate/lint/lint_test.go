package lint

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gradegate/gradegate/manifest"
)

// python resolves the real interpreter behind python3 once: python3 on PATH
// may be a version-manager shim that costs a start-up per call.
var python = sync.OnceValues(func() (string, error) {
	out, err := exec.Command("python3", "-c", "import sys;print(sys.executable)").Output()
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
})

func needPython(t *testing.T) string {
	t.Helper()
	py, err := python()
	if err != nil || py == "" {
		t.Skipf("no python3 to lint with: %v", err)
	}
	return py
}

// short is the part of a finding a table states; File is checked separately.
type short struct {
	Code     string
	Severity manifest.Severity
	Line     int
}

func shorten(fs []manifest.Finding) []short {
	out := []short{}
	for _, f := range fs {
		out = append(out, short{f.Code, f.Severity, f.Line})
	}
	return out
}

const (
	hold = manifest.SeverityHold
	warn = manifest.SeverityWarn
)

// clean is a grader with no finding: it reads both arguments and turns a
// malformed answer into 0.0.
const clean = `import json


def grade(sample, item):
    try:
        candidate = json.loads(sample["output_text"])
    except ValueError:
        return 0.0
    return 1.0 if candidate == item["expected"] else 0.0
`

func TestGrader(t *testing.T) {
	py := needPython(t)
	tests := []struct {
		name     string
		source   string
		contract string
		tag      string
		want     []short
		// contains is a substring every finding's message must hold.
		contains string
	}{
		{name: "clean grader", source: clean, tag: "2025-05-08", want: []short{}},
		{name: "clean grader without image tag", source: clean, want: []short{}},

		// grade_signature
		{
			name:     "syntax error is a finding with its line",
			source:   "def grade(sample, item):\n    return 1.0\n\ndef broken(:\n    pass\n",
			want:     []short{{CodeGradeSignature, hold, 4}},
			contains: "does not parse",
		},
		{
			name:     "null byte does not parse",
			source:   "def grade(sample, item):\n    return 0.0\x00\n",
			want:     []short{{CodeGradeSignature, hold, 0}},
			contains: "does not parse",
		},
		{
			name:     "no grade function",
			source:   "def score(sample, item):\n    return sample['x']\n",
			want:     []short{{CodeGradeSignature, hold, 0}},
			contains: "no module-level grade",
		},
		{
			name:     "grade nested in a class is not module-level",
			source:   "class G:\n    def grade(self, sample, item):\n        return sample['x']\n",
			want:     []short{{CodeGradeSignature, hold, 0}},
			contains: "no module-level grade",
		},
		{
			name:     "a third positional parameter is ctx",
			source:   "def grade(sample, item, ctx):\n    return sample['x']\n",
			want:     []short{{CodeHostedLimit, warn, 1}},
			contains: "has no ctx",
		},
		{
			name:     "four positional parameters",
			source:   "def grade(sample, item, ctx, extra):\n    return sample['x']\n",
			want:     []short{{CodeGradeSignature, hold, 1}},
			contains: "4 positional parameters (sample, item, ctx, extra)",
		},
		{
			name:     "four positional parameters even with a default",
			source:   "def grade(sample, item, ctx, extra=None):\n    return sample['x']\n",
			want:     []short{{CodeGradeSignature, hold, 1}},
			contains: "exactly 2, or 3 with ctx",
		},
		{
			name:   "one positional parameter",
			source: "def grade(sample):\n    return sample['x']\n",
			want:   []short{{CodeGradeSignature, hold, 1}},
		},
		{
			name:   "star args alone are not two positional parameters",
			source: "def grade(*args):\n    return args[0]['x']\n",
			want:   []short{{CodeGradeSignature, hold, 1}},
		},
		{
			name:   "extra star args and kwargs are tolerated",
			source: "def grade(sample, item, *args, **kwargs):\n    return sample['x']\n",
			want:   []short{},
		},
		{
			name:   "positional-only parameters count",
			source: "def grade(sample, item, /):\n    return sample['x']\n",
			want:   []short{},
		},
		{
			name:     "keyword-only parameter without default",
			source:   "def grade(sample, item, *, strict):\n    return sample['x']\n",
			want:     []short{{CodeGradeSignature, hold, 1}},
			contains: "keyword-only parameter strict",
		},
		{
			name:   "keyword-only parameter with default is fine",
			source: "def grade(sample, item, *, strict=True):\n    return sample['x']\n",
			want:   []short{},
		},
		{
			name:     "async grade",
			source:   "async def grade(sample, item):\n    return sample['x']\n",
			want:     []short{{CodeGradeSignature, hold, 1}},
			contains: "async",
		},
		{
			name:   "lambda grade",
			source: "grade = lambda sample, item: float(sample['x'] == item['x'])\n",
			want:   []short{},
		},
		{
			name:     "grade bound to something that is not a function",
			source:   "import functools\n\ndef _g(sample, item, k):\n    return sample['x']\n\ngrade = functools.partial(_g, k=1)\n",
			want:     []short{{CodeGradeSignature, hold, 6}},
			contains: "not bound by a def",
		},
		{
			name:   "the last definition wins",
			source: "def grade(sample):\n    return 0.0\n\ndef grade(sample, item):\n    return sample['x']\n",
			want:   []short{},
		},
		{
			name:   "grade defined in a module-level if",
			source: "import sys\nif sys.version_info >= (3, 8):\n    def grade(sample, item):\n        return sample['x']\n",
			want:   []short{},
		},
		{
			name:     "batch contract",
			source:   "def grade_batch(samples):\n    return {'samples': [{'case_id': s['case_id'], 'scores': {'score': 1.0}} for s in samples]}\n",
			contract: "batch",
			want:     []short{{CodeHostedLimit, warn, 0}},
		},
		{
			name:     "batch contract with only grade",
			source:   "def grade(sample, item):\n    return sample['x']\n",
			contract: "batch",
			want:     []short{{CodeGradeSignature, hold, 0}, {CodeHostedLimit, warn, 0}},
			contains: "grader.contract: sample",
		},
		{
			name:     "sample contract with only grade_batch",
			source:   "def grade_batch(samples):\n    return samples\n",
			want:     []short{{CodeGradeSignature, hold, 0}},
			contains: "grader.contract: batch",
		},
		{
			name:     "grade_batch with three parameters",
			source:   "def grade_batch(samples, ctx, items):\n    return samples\n",
			contract: "batch",
			want:     []short{{CodeHostedLimit, warn, 0}, {CodeGradeSignature, hold, 1}},
		},

		// sample_unused
		{
			name:     "grade reads only the item",
			source:   "def grade(sample, item):\n    return 1.0 if item['x'] else 0.0\n",
			want:     []short{{CodeSampleUnused, warn, 1}},
			contains: "never reads its first parameter sample",
		},
		{
			name:   "constant grade never reads the sample",
			source: "def grade(sample, item):\n    return 1.0\n",
			want:   []short{{CodeSampleUnused, warn, 1}},
		},
		{
			name:   "sample read inside a nested function counts",
			source: "def grade(sample, item):\n    def text():\n        return sample.get('output_text')\n    return float(text() == item['x'])\n",
			want:   []short{},
		},
		{
			name:   "first parameter under another name",
			source: "def grade(s, item):\n    return float(s['output_text'] == item['x'])\n",
			want:   []short{},
		},
		{
			name:     "grade_batch never reads samples",
			source:   "def grade_batch(samples):\n    return {'samples': []}\n",
			contract: "batch",
			want:     []short{{CodeHostedLimit, warn, 0}, {CodeSampleUnused, warn, 1}},
		},

		// broad_except_constant
		{
			name:     "except Exception returns 1.0",
			source:   "def grade(sample, item):\n    try:\n        return float(sample['x'] == item['x'])\n    except Exception:\n        return 1.0\n",
			want:     []short{{CodeBroadExceptConstant, hold, 4}},
			contains: "`except Exception:` returns 1.0 (line 5)",
		},
		{
			name:   "except Exception returns int 1",
			source: "def grade(sample, item):\n    try:\n        return float(sample['x'] == item['x'])\n    except Exception as e:\n        print(e)\n        return 1\n",
			want:   []short{{CodeBroadExceptConstant, hold, 4}},
		},
		{
			name:     "bare except returns 0.5",
			source:   "def grade(sample, item):\n    try:\n        return float(sample['x'] == item['x'])\n    except:\n        return 0.5\n",
			want:     []short{{CodeBroadExceptConstant, warn, 4}},
			contains: "`except:` returns 0.5",
		},
		{
			name:   "except BaseException returns 1.0",
			source: "def grade(sample, item):\n    try:\n        return float(sample['x'] == item['x'])\n    except BaseException:\n        return 1.0\n",
			want:   []short{{CodeBroadExceptConstant, hold, 4}},
		},
		{
			name:   "Exception inside a tuple",
			source: "def grade(sample, item):\n    try:\n        return float(sample['x'] == item['x'])\n    except (ValueError, Exception):\n        return 1.0\n",
			want:   []short{{CodeBroadExceptConstant, hold, 4}},
		},
		{
			name:   "constant returned from a nested block of the handler",
			source: "def grade(sample, item):\n    try:\n        return float(sample['x'] == item['x'])\n    except Exception:\n        if item.get('lenient'):\n            return 1.0\n        raise\n",
			want:   []short{{CodeBroadExceptConstant, hold, 4}},
		},
		{
			name:   "scores dict with full credit",
			source: "def grade(sample, item):\n    try:\n        return float(sample['x'] == item['x'])\n    except Exception:\n        return {'scores': {'score': 1.0}}\n",
			want:   []short{{CodeBroadExceptConstant, hold, 4}},
		},
		{
			name:   "except in a helper function counts too",
			source: "def parse(sample):\n    try:\n        return int(sample['x'])\n    except Exception:\n        return 1\n\ndef grade(sample, item):\n    return float(parse(sample) == item['x'])\n",
			want:   []short{{CodeBroadExceptConstant, hold, 4}},
		},
		{
			name:   "except Exception returns 0.0",
			source: "def grade(sample, item):\n    try:\n        return float(sample['x'] == item['x'])\n    except Exception:\n        return 0.0\n",
			want:   []short{},
		},
		{
			name:   "except Exception returns int 0",
			source: "def grade(sample, item):\n    try:\n        return float(sample['x'] == item['x'])\n    except Exception:\n        return 0\n",
			want:   []short{},
		},
		{
			name:   "except ValueError returns 0.0",
			source: "def grade(sample, item):\n    try:\n        return float(sample['x'] == item['x'])\n    except ValueError:\n        return 0.0\n",
			want:   []short{},
		},
		{
			name:   "narrow handler returning 1.0 is not broad",
			source: "def grade(sample, item):\n    try:\n        return float(sample['x'] == item['x'])\n    except KeyError:\n        return 1.0\n",
			want:   []short{},
		},
		{
			name:   "except Exception that re-raises",
			source: "def grade(sample, item):\n    try:\n        return float(sample['x'] == item['x'])\n    except Exception:\n        raise\n",
			want:   []short{},
		},
		{
			name:   "a function defined inside the handler is not its return",
			source: "def grade(sample, item):\n    try:\n        return float(sample['x'] == item['x'])\n    except Exception:\n        def fallback():\n            return 1.0\n        raise\n",
			want:   []short{},
		},
		{
			name:   "returning a bool is not a numeric constant",
			source: "def grade(sample, item):\n    try:\n        return float(sample['x'] == item['x'])\n    except Exception:\n        return True\n",
			want:   []short{},
		},

		// import_not_in_image
		{
			name:   "image packages by import name",
			source: "import numpy as np\nimport yaml\nfrom sklearn.metrics import f1_score\nfrom rapidfuzz import fuzz\nimport skbio, rouge_score, ast_grep_py\n\n" + clean,
			tag:    "2025-05-08",
			want:   []short{},
		},
		{
			name:     "distribution name is not an import name",
			source:   "import pyyaml\n\n" + clean,
			tag:      "2025-05-08",
			want:     []short{{CodeImportNotInImage, hold, 1}},
			contains: "import of pyyaml is not in image 2025-05-08",
		},
		{
			name:     "a dependency of an image package is not in the documented set",
			source:   "import dateutil.parser\n\n" + clean,
			tag:      "2025-05-08",
			want:     []short{{CodeImportNotInImage, hold, 1}},
			contains: "dateutil.parser",
		},
		{
			name:   "without an image tag the default image's packages count",
			source: "import numpy\nfrom rapidfuzz import fuzz\n\n" + clean,
			want:   []short{},
		},
		{
			name:     "without an image tag an import outside the default image holds",
			source:   "import torch\n\n" + clean,
			want:     []short{{CodeImportNotInImage, hold, 1}},
			contains: "import of torch is not in image 2025-05-08",
		},
		{
			name:     "an unknown image tag warns and checks against the default image",
			source:   "import numpy\nimport statistics\n\n" + clean,
			tag:      "alpha",
			want:     []short{{CodeImageTagUnknown, warn, 0}},
			contains: "checked against OpenAI's current default image, 2025-05-08",
		},
		{
			name:   "an unknown image tag still holds an import outside the default image",
			source: "import torch\nimport statistics\n\n" + clean,
			tag:    "alpha",
			want:   []short{{CodeImageTagUnknown, warn, 0}, {CodeImportNotInImage, hold, 1}},
		},
		{
			name:     "import inside grade",
			source:   "def grade(sample, item):\n    import torch\n    return float(sample['x'] == item['x'])\n",
			tag:      "2025-05-08",
			want:     []short{{CodeImportNotInImage, hold, 2}},
			contains: "torch",
		},
		{
			name:     "relative import",
			source:   "from . import helpers\n\n" + clean,
			tag:      "2025-05-08",
			want:     []short{{CodeImportNotInImage, hold, 1}},
			contains: "relative import (from . import helpers)",
		},
		{
			name:   "optional import guarded by ImportError",
			source: "try:\n    import ujson as fastjson\nexcept ImportError:\n    fastjson = None\n\n" + clean,
			tag:    "2025-05-08",
			want:   []short{},
		},
		{
			name:   "import only for type checking",
			source: "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from mytypes import Sample\n\n" + clean,
			want:   []short{},
		},
		{
			name:   "standard library with dotted names",
			source: "import os.path\nimport xml.etree.ElementTree as ET\nfrom collections import abc\nfrom __future__ import annotations\n\n" + clean,
			want:   []short{},
		},

		// network_import
		{
			name:     "requests is a network client outside the image",
			source:   "import requests\n\n" + clean,
			tag:      "2025-05-08",
			want:     []short{{CodeImportNotInImage, hold, 1}, {CodeNetworkImport, warn, 1}},
			contains: "requests",
		},
		{
			name:   "socket is standard library but network",
			source: "import socket\n\n" + clean,
			want:   []short{{CodeNetworkImport, warn, 1}},
		},
		{
			name:     "from urllib import request",
			source:   "from urllib import request\n\n" + clean,
			want:     []short{{CodeNetworkImport, warn, 1}},
			contains: "urllib.request",
		},
		{
			name:   "from http.client import a name",
			source: "from http.client import HTTPSConnection\n\n" + clean,
			want:   []short{{CodeNetworkImport, warn, 1}},
		},
		{
			name:   "urllib.parse is not network",
			source: "import urllib\nimport urllib.parse\nfrom urllib.parse import urlsplit\n\n" + clean,
			want:   []short{},
		},
		{
			name:   "guarded network import still warns",
			source: "try:\n    import httpx\nexcept ImportError:\n    httpx = None\n\n" + clean,
			tag:    "2025-05-08",
			want:   []short{{CodeNetworkImport, warn, 2}},
		},

		// reads_environment
		{
			name:     "os.environ subscript",
			source:   "import os\n\ndef grade(sample, item):\n    return float(sample['x'] == os.environ['EXPECTED'])\n",
			want:     []short{{CodeReadsEnvironment, warn, 4}},
			contains: "os.environ",
		},
		{
			name:     "os.getenv",
			source:   "import os\n\ndef grade(sample, item):\n    return float(sample['x'] == os.getenv('EXPECTED'))\n",
			want:     []short{{CodeReadsEnvironment, warn, 4}},
			contains: "os.getenv",
		},
		{
			name:   "os.environ.get under an alias",
			source: "import os as system\n\ndef grade(sample, item):\n    return float(sample['x'] == system.environ.get('EXPECTED'))\n",
			want:   []short{{CodeReadsEnvironment, warn, 4}},
		},
		{
			name:   "environ imported from os",
			source: "from os import environ as env, getenv\n\ndef grade(sample, item):\n    a = env.get('A')\n    b = getenv('B')\n    return float(sample['x'] == (a or b))\n",
			want:   []short{{CodeReadsEnvironment, warn, 4}, {CodeReadsEnvironment, warn, 5}},
		},
		{
			name:   "two reads on one line are one finding",
			source: "import os\n\ndef grade(sample, item):\n    return float(sample['x'] == os.getenv('A', os.environ.get('B')))\n",
			want:   []short{{CodeReadsEnvironment, warn, 4}},
		},
		{
			name:   "other os functions are fine",
			source: "import os\n\ndef grade(sample, item):\n    return float(os.path.basename(sample['x']) == item['x'])\n",
			want:   []short{},
		},
		{
			name:   "an environ that is not os's",
			source: "def grade(sample, item):\n    environ = item['environ']\n    return float(sample['x'] == environ)\n",
			want:   []short{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := manifest.Grader{Contract: tt.contract, ImageTag: tt.tag, PassThreshold: manifest.DefaultPassThreshold}
			got, err := Grader(context.Background(), py, []byte(tt.source), "evals/x/grader.py", g)
			if err != nil {
				t.Fatalf("Grader: %v", err)
			}
			if diff := cmp.Diff(tt.want, shorten(got)); diff != "" {
				t.Errorf("findings (-want +got):\n%s\nall: %+v", diff, got)
			}
			for _, f := range got {
				if f.File != "evals/x/grader.py" {
					t.Errorf("finding %s: File = %q, want the grader path as given", f.Code, f.File)
				}
				if f.Message == "" {
					t.Errorf("finding %s has no message", f.Code)
				}
			}
			if tt.contains != "" {
				found := false
				for _, f := range got {
					found = found || strings.Contains(f.Message, tt.contains)
				}
				if !found {
					t.Errorf("no finding message contains %q: %+v", tt.contains, got)
				}
			}
		})
	}
}

func TestGraderSourceSize(t *testing.T) {
	py := needPython(t)
	tests := []struct {
		name string
		size int
		want []short
	}{
		// Over the hosted 256,000 bytes but within 256 KiB: a warning only.
		{name: "at the limit", size: MaxSourceBytes, want: []short{{CodeHostedLimit, warn, 0}}},
		{name: "one byte over", size: MaxSourceBytes + 1, want: []short{{CodeSourceTooLarge, hold, 0}}},
		// Far over the limit Python is not asked at all: the padding below
		// is not even valid Python, and no grade_signature shows up.
		{name: "far over the limit", size: maxParseBytes + 1, want: []short{{CodeSourceTooLarge, hold, 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := []byte(clean)
			if tt.size > maxParseBytes {
				src = append(src, bytes.Repeat([]byte("("), tt.size-len(src))...)
			} else {
				// Pad with a comment so the source stays a valid grader.
				pad := tt.size - len(src) - 2
				src = append(src, '#')
				src = append(src, bytes.Repeat([]byte("x"), pad)...)
				src = append(src, '\n')
			}
			if len(src) != tt.size {
				t.Fatalf("test source is %d bytes, want %d", len(src), tt.size)
			}
			got, err := Grader(context.Background(), py, src, "grader.py", manifest.Grader{ImageTag: "2025-05-08"})
			if err != nil {
				t.Fatalf("Grader: %v", err)
			}
			if diff := cmp.Diff(tt.want, shorten(got)); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGraderErrors(t *testing.T) {
	py := needPython(t)
	tests := []struct {
		name      string
		python    string
		contract  string
		wantInput bool
	}{
		{name: "unknown contract", python: py, contract: "stream", wantInput: true},
		{name: "relative interpreter path", python: "python3"},
		{name: "missing interpreter", python: filepath.Join(t.TempDir(), "python3")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Grader(context.Background(), tt.python, []byte(clean), "grader.py", manifest.Grader{Contract: tt.contract})
			if err == nil {
				t.Fatal("Grader: no error")
			}
			if got := errors.Is(err, manifest.ErrInput); got != tt.wantInput {
				t.Errorf("errors.Is(err, ErrInput) = %v, want %v (err: %v)", got, tt.wantInput, err)
			}
		})
	}
}

func TestGraderCanceled(t *testing.T) {
	py := needPython(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Grader(ctx, py, []byte(clean), "grader.py", manifest.Grader{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Grader with a canceled context: err = %v, want context.Canceled", err)
	}
}

// TestExamples lints the example graders shipped under testdata/examples.
func TestExamples(t *testing.T) {
	py := needPython(t)
	tests := []struct {
		name string
		dir  string
		// want lists codes that must be found; noHold says no hold finding
		// may be.
		want   []string
		noHold bool
	}{
		{name: "order-summary is clean", dir: "order-summary", noHold: true},
		{name: "except-return-one", dir: "broken/except-return-one", want: []string{CodeBroadExceptConstant}},
		{name: "item-only", dir: "broken/item-only", want: []string{CodeSampleUnused}, noHold: true},
		{name: "constant", dir: "broken/constant", want: []string{CodeSampleUnused}, noHold: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join("..", "..", "testdata", "examples", filepath.FromSlash(tt.dir), "grader.py")
			src, err := os.ReadFile(path)
			if errors.Is(err, os.ErrNotExist) {
				t.Skipf("%s is not there yet", path)
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := Grader(context.Background(), py, src, path, manifest.Grader{Contract: "sample", ImageTag: "2025-05-08", PassThreshold: manifest.DefaultPassThreshold})
			if err != nil {
				t.Fatalf("Grader: %v", err)
			}
			for _, code := range tt.want {
				found := false
				for _, f := range got {
					found = found || f.Code == code
				}
				if !found {
					t.Errorf("no %s finding in %+v", code, got)
				}
			}
			for _, f := range got {
				if tt.noHold && f.Severity == manifest.SeverityHold {
					t.Errorf("unexpected hold finding: %+v", f)
				}
			}
		})
	}
}

func TestHostedLimit(t *testing.T) {
	py := needPython(t)
	intReturn := "def grade(sample, item):\n    if sample['x']:\n        return 1\n    return 0.0\n"
	dictReturn := "def grade(sample, item):\n    return {'score': float(sample['x'] == item['x'])}\n"
	tests := []struct {
		name     string
		source   string
		grader   manifest.Grader
		hosted   bool
		want     []short
		contains string
	}{
		{name: "the hosted limits themselves", source: clean, grader: manifest.Grader{TimeoutSeconds: 120, MemoryMB: 2048}, want: []short{}},
		{name: "timeout above 120 s", source: clean, grader: manifest.Grader{TimeoutSeconds: 121},
			want: []short{{CodeHostedLimit, warn, 0}}, contains: "timeout_seconds is 121"},
		{name: "memory above 2048 MB", source: clean, grader: manifest.Grader{MemoryMB: 4096},
			want: []short{{CodeHostedLimit, warn, 0}}, contains: "memory_mb is 4096"},
		{name: "source of 256,000 bytes", source: clean + "#" + strings.Repeat("x", HostedSourceBytes-len(clean)-2) + "\n",
			want: []short{{CodeHostedLimit, warn, 0}}, contains: "256000 bytes"},
		{name: "source one byte under 256,000", source: clean + "#" + strings.Repeat("x", HostedSourceBytes-len(clean)-3) + "\n",
			want: []short{}},
		{name: "batch contract", source: "def grade_batch(samples):\n    return {'metrics': {}, 'samples': [s for s in samples]}\n",
			grader: manifest.Grader{Contract: "batch"}, want: []short{{CodeHostedLimit, warn, 0}}, contains: "no batch contract"},
		{name: "int return with hosted parity", source: intReturn, hosted: true,
			want: []short{{CodeHostedLimit, warn, 3}}, contains: "the int 1"},
		{name: "int return without hosted parity", source: intReturn, want: []short{}},
		{name: "dict return with hosted parity", source: dictReturn, hosted: true,
			want: []short{{CodeHostedLimit, warn, 2}}, contains: "a dict"},
		{name: "a nested function's int return is not grade's", hosted: true,
			source: "def grade(sample, item):\n    def n():\n        return 1\n    return float(n() == len(sample['x']))\n", want: []short{}},
		{name: "float returns are what the hosted grader wants", source: clean, hosted: true, want: []short{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []Option
			if tt.hosted {
				opts = append(opts, ForHosted())
			}
			got, err := Grader(context.Background(), py, []byte(tt.source), "grader.py", tt.grader, opts...)
			if err != nil {
				t.Fatalf("Grader: %v", err)
			}
			if diff := cmp.Diff(tt.want, shorten(got)); diff != "" {
				t.Errorf("findings (-want +got):\n%s\nall: %+v", diff, got)
			}
			for _, f := range got {
				if tt.contains != "" && !strings.Contains(f.Message, tt.contains) {
					t.Errorf("message %q does not say %q", f.Message, tt.contains)
				}
			}
		})
	}
}

func TestPragmaWithoutReason(t *testing.T) {
	py := needPython(t)
	tests := []struct {
		name    string
		comment string
		want    []short
	}{
		{"with a reason", "# gradegate: no-mutate: JSON has no int subclass", []short{}},
		{"without a reason", "# gradegate: no-mutate", []short{{CodePragmaWithoutReason, warn, 2}}},
		{"an empty reason", "# gradegate: no-mutate:  ", []short{{CodePragmaWithoutReason, warn, 2}}},
		{"no pragma", "# why not", []short{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "def grade(sample, item):\n    if type(sample['x']) is int:  " + tt.comment + "\n        return 0.0\n    return 1.0\n"
			got, err := Grader(context.Background(), py, []byte(src), "grader.py", manifest.Grader{})
			if err != nil {
				t.Fatalf("Grader: %v", err)
			}
			if diff := cmp.Diff(tt.want, shorten(got)); diff != "" {
				t.Errorf("findings (-want +got):\n%s\nall: %+v", diff, got)
			}
		})
	}
}

// TestGraderCached lints through the script cache: the kept answer gives
// the same findings as a fresh lint, for a grader with findings and for a
// clean one, and a grader changed since is linted afresh.
func TestGraderCached(t *testing.T) {
	py := needPython(t)
	dir := t.TempDir()
	g := manifest.Grader{Contract: "sample", PassThreshold: 1, ImageTag: "2025-05-08"}
	bad := "import os\nimport requests\n\ndef grade(sample, item):\n    try:\n        return float(os.environ['X'])\n    except Exception:\n        return 1.0\n"
	for _, src := range []string{bad, clean, bad + "\n# changed\n"} {
		want, err := Grader(context.Background(), py, []byte(src), "grader.py", g)
		if err != nil {
			t.Fatal(err)
		}
		if (src == clean) != (len(want) == 0) {
			t.Fatalf("findings of %q: %+v", src, want)
		}
		for range 2 {
			got, err := Grader(context.Background(), py, []byte(src), "grader.py", g, CacheIn(dir))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("through the cache (-fresh +cached):\n%s", diff)
			}
		}
	}
	if kept, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(kept) != 3 {
		t.Fatalf("%d answers kept, want 3 (one per source)", len(kept))
	}
}
