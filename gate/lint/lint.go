// Package lint checks a Python grader's source without running it: the
// grader contract's signature, its size, its imports against the image's
// package set, and patterns that let a grader pass what it should fail
// (gradegate validate and run report them as findings).
//
// The checks that need Python's syntax tree live in lint.py, embedded and run
// with the grader's own interpreter, which parses the source and never
// imports or executes it. What an import is allowed to be (the image package
// sets, the network clients) is decided here in Go.
package lint

import (
	"cmp"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/gradegate/gradegate/gate/worker"
	"github.com/gradegate/gradegate/manifest"
)

// Finding codes of the grader lint.
const (
	CodeGradeSignature      = "grade_signature"
	CodeSourceTooLarge      = "source_too_large"
	CodeSampleUnused        = "sample_unused"
	CodeBroadExceptConstant = "broad_except_constant"
	CodeImportNotInImage    = "import_not_in_image"
	CodeReadsEnvironment    = "reads_environment"
	CodeNetworkImport       = "network_import"
	// CodePragmaWithoutReason: a "# gradegate: no-mutate" comment that does
	// not say why (warn); the mutation score counts its mutants as survivors.
	CodePragmaWithoutReason = "pragma_without_reason"
	// CodeHostedLimit: a setting or a return the hosted Python grader would
	// not honour the way gradegate does (warn).
	CodeHostedLimit = "hosted_limit"
)

// The hosted Python grader's limits, from OpenAI's graders guide: a grader
// runs for at most two minutes with at most 2 GB of memory, and its source
// must be under 256 kB.
const (
	HostedTimeoutSeconds = 120
	HostedMemoryMB       = 2048
	HostedSourceBytes    = 256_000
)

// Option changes what Grader checks.
type Option func(*options)

type options struct {
	scripts worker.ScriptCache
	hosted  bool
	image   ActionImage
	imports *[]string // ImportsInto
}

// ForHosted adds the checks that only matter when the canaries also run on
// the hosted grader (canary --hosted): a grade that returns an int or a dict,
// where the hosted grader wants a float.
func ForHosted() Option { return func(o *options) { o.hosted = true } }

// CacheIn keeps lint.py's answers in dir (worker.ScriptCache): the answer
// depends only on the interpreter, the source and the contract, and the
// next command that lints the same source with the same interpreter reads
// it instead of starting Python. "" keeps none.
func CacheIn(dir string) Option { return func(o *options) { o.scripts = worker.ScriptCache{Dir: dir} } }

// MaxSourceBytes is the largest grader source the hosted Python grader
// accepts: OpenAI's graders guide says uploaded code must be under 256 kB.
const MaxSourceBytes = 256 * 1024

// maxParseBytes bounds what lint hands to Python. A source this far over the
// limit already holds with source_too_large, and parsing many megabytes of it
// would only cost time and memory for findings nobody needs yet.
const maxParseBytes = 16 * MaxSourceBytes

//go:embed lint.py
var script string

// networkModules returns the modules whose import means the grader wants
// the network, which neither gradegate's sandbox nor the hosted grader gives
// it. A dotted name matches itself and its submodules.
func networkModules() []string {
	return []string{
		"socket", "urllib.request", "http.client", "requests", "httpx", "aiohttp",
		"urllib3", "ftplib", "smtplib", "poplib", "imaplib", "nntplib", "telnetlib",
		"xmlrpc.client",
	}
}

// Grader lints a grader's source and returns its findings, each naming file
// (the grader path as given) and, where it has one, a line. python is the
// absolute path of the interpreter that will run the grader: the standard
// library is that interpreter's sys.stdlib_module_names.
//
// Findings are values: a grader that does not parse is a grade_signature
// finding, not an error. The error is for lint itself failing (no
// interpreter, a crash of lint.py) and for a contract lint does not know.
//
// Imports are checked against the standard library plus the package set of
// g.ImageTag (see ImagePackages). Decisions:
//   - without an image_tag the packages of OpenAI's current default image
//     (DefaultImageTag) count, as on the hosted grader;
//   - an image_tag gradegate does not know adds one warn finding
//     (image_tag_unknown) and imports are checked against the default
//     image; the standard library is allowed whatever the tag;
//   - an import inside a try whose handler catches ImportError, or under
//     `if TYPE_CHECKING:`, is optional and not held; a relative import holds,
//     because the grader runs as one source with nothing beside it;
//   - imports are found anywhere in the source, not only at module level: an
//     import inside grade fails just the same, only later.
//
// hosted_limit warns where the grader would behave differently on the hosted
// grader: timeout_seconds above 120, memory_mb above 2048, a source of
// 256,000 bytes or more, the batch contract (the hosted grader calls
// grade(sample, item) one sample at a time) and, with ForHosted, a grade that
// returns an int or a dict.
//
// InImage names the Action image the grader will run in: an import its
// image tag provides but the image does not install holds too.
func Grader(ctx context.Context, python string, source []byte, file string, g manifest.Grader, opts ...Option) ([]manifest.Finding, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	contract := g.Contract
	switch contract {
	case "":
		contract = "sample"
	case "sample", "batch":
	default:
		return nil, fmt.Errorf("%w: lint %s: grader.contract %q: want sample or batch", manifest.ErrInput, file, g.Contract)
	}
	if !filepath.IsAbs(python) {
		return nil, fmt.Errorf("lint %s: python interpreter %q is not an absolute path", file, python)
	}

	var found []manifest.Finding
	add := func(code string, sev manifest.Severity, line int, msg string) {
		found = append(found, manifest.Finding{Code: code, Severity: sev, File: file, Line: line, Message: msg})
	}

	if n := len(source); n > MaxSourceBytes {
		msg := fmt.Sprintf("the source is %d bytes, over the hosted grader's limit of 256 kB (%d bytes)", n, MaxSourceBytes)
		if n > maxParseBytes {
			msg += "; the other checks were skipped"
		}
		add(CodeSourceTooLarge, manifest.SeverityHold, 0, msg)
	}
	for _, f := range hostedLimits(len(source), contract, g) {
		add(CodeHostedLimit, manifest.SeverityWarn, 0, f)
	}
	tag, known := CheckedImageTag(g.ImageTag)
	if !known {
		add(CodeImageTagUnknown, manifest.SeverityWarn, 0, fmt.Sprintf(
			"image_tag %q is not one gradegate knows (%s): third-party imports are checked against OpenAI's current default image, %s, instead; standard-library imports are unaffected",
			g.ImageTag, strings.Join(ImageTags(), ", "), tag))
	}
	if len(source) > maxParseBytes {
		sortFindings(found)
		return found, nil
	}

	out, err := runScript(ctx, o.scripts, python, source, contract, o.hosted)
	if err != nil {
		return nil, fmt.Errorf("lint %s: %w", file, err)
	}
	for _, f := range out.Findings {
		sev, msg := f.Severity, f.Message
		if f.Code == CodeBroadExceptConstant && f.Credit != nil && *f.Credit >= g.PassThreshold {
			// A handler that hands out a passing score turns every crash of
			// the try block into a pass: the headline defect holds, with the
			// line of the return that does it.
			sev = manifest.SeverityHold
			msg = fmt.Sprintf("%s; %s is at or above pass_threshold %s, so every such error passes: return 0.0 for a malformed answer and let a broken fixture raise",
				msg, strconv.FormatFloat(*f.Credit, 'g', -1, 64), strconv.FormatFloat(g.PassThreshold, 'g', -1, 64))
		}
		add(f.Code, sev, f.Line, msg)
	}
	found = append(found, importFindings(out.Imports, file, tag, o.image)...)
	if o.imports != nil {
		for _, im := range out.Imports {
			if top, _, _ := strings.Cut(im.Module, "."); im.Level == 0 && top != "" && !slices.Contains(*o.imports, top) {
				*o.imports = append(*o.imports, top)
			}
		}
	}
	sortFindings(found)
	return found, nil
}

// scriptOutput is what lint.py prints.
type scriptOutput struct {
	Python   string `json:"python"`
	Findings []struct {
		Code     string            `json:"code"`
		Severity manifest.Severity `json:"severity"`
		Line     int               `json:"line"`
		Message  string            `json:"message"`
		// Credit is the score a broad_except_constant handler returns.
		Credit *float64 `json:"credit"`
		// ReturnLine is the line of that handler's return.
		ReturnLine int `json:"return_line"`
	} `json:"findings"`
	Imports []pyImport `json:"imports"`
}

// pyImport is one import statement's module as lint.py saw it.
type pyImport struct {
	Module string   `json:"module"` // "urllib", "sklearn.metrics"; "" for `from . import x`
	Names  []string `json:"names"`  // the names of a from-import
	Level  int      `json:"level"`  // dots of a relative import
	Line   int      `json:"line"`
	Stdlib bool     `json:"stdlib"` // top-level name in sys.stdlib_module_names
	Guard  string   `json:"guard"`  // "", "try" or "type_checking"
}

// hostedLimits says which of the grader's settings the hosted grader would
// not honour.
func hostedLimits(size int, contract string, g manifest.Grader) []string {
	if g.Platform == manifest.PlatformMKA1 {
		// Written for MKA1's sandbox, whose limits the manifest's bounds
		// already are; OpenAI's hosted grader is not its target.
		return nil
	}
	var out []string
	if g.TimeoutSeconds > HostedTimeoutSeconds {
		out = append(out, fmt.Sprintf("timeout_seconds is %d: the hosted grader stops a grader after %d seconds", g.TimeoutSeconds, HostedTimeoutSeconds))
	}
	if g.MemoryMB > HostedMemoryMB {
		out = append(out, fmt.Sprintf("memory_mb is %d: the hosted grader gives a grader at most %d MB", g.MemoryMB, HostedMemoryMB))
	}
	if size >= HostedSourceBytes && size <= MaxSourceBytes {
		out = append(out, fmt.Sprintf("the source is %d bytes: the hosted grader wants it under 256 kB (%d bytes)", size, HostedSourceBytes))
	}
	if contract == "batch" {
		out = append(out, "contract batch: the hosted grader has no batch contract, it calls grade(sample, item) one sample at a time")
	}
	return out
}

// runScript runs lint.py on source with the interpreter python.
func runScript(ctx context.Context, scripts worker.ScriptCache, python string, source []byte, contract string, hosted bool) (*scriptOutput, error) {
	config, err := json.Marshal(map[string]any{"contract": contract, "hosted": hosted})
	if err != nil {
		return nil, fmt.Errorf("encoding lint config: %w", err)
	}
	var out scriptOutput
	if err := scripts.Run(ctx, python, script, source, &out, string(config)); err != nil {
		return nil, err
	}
	return &out, nil
}

// importFindings applies the image and network rules to the imports lint.py
// found.
func importFindings(imports []pyImport, file, tag string, image ActionImage) []manifest.Finding {
	var out []manifest.Finding
	seen := map[string]bool{}
	add := func(code string, sev manifest.Severity, line int, key, msg string) {
		// One finding per code, line and module: `import a, a.b` is one problem.
		k := fmt.Sprintf("%s\x00%d\x00%s", code, line, key)
		if seen[k] {
			return
		}
		seen[k] = true
		out = append(out, manifest.Finding{Code: code, Severity: sev, File: file, Line: line, Message: msg})
	}
	for _, im := range imports {
		if im.Guard == "type_checking" {
			continue // never runs
		}
		if net := networkModule(im); net != "" {
			add(CodeNetworkImport, manifest.SeverityWarn, im.Line, net, fmt.Sprintf(
				"imports %s, a network client: graders run without network access, here and on the hosted grader, so every call through it fails", net))
		}
		if im.Guard == "try" || im.Stdlib {
			continue
		}
		if im.Level > 0 {
			from := strings.Repeat(".", im.Level) + im.Module
			add(CodeImportNotInImage, manifest.SeverityHold, im.Line, from, fmt.Sprintf(
				"relative import (from %s import %s): the grader runs as one source file with nothing beside it",
				from, strings.Join(im.Names, ", ")))
			continue
		}
		top, _, _ := strings.Cut(im.Module, ".")
		if p, ok := importer(tag, top); ok {
			if !image.Installs(p) {
				add(CodeImportNotInImage, manifest.SeverityHold, im.Line, top, fmt.Sprintf(
					"import of %s: image_tag %s provides it (%s), but the gradegate %s image has only the standard library; grade in the full image (uses: gradegate/gradegate, not gradegate/gradegate/slim)",
					im.Module, tag, p.Requirement(), image))
			}
			continue
		}
		add(CodeImportNotInImage, manifest.SeverityHold, im.Line, top, notInImage(im.Module, top, tag))
	}
	return out
}

// notInImage explains why a module is not available, and where it would be.
func notInImage(module, top, tag string) string {
	var msg string
	_, known := ImagePackages(tag)
	switch {
	case tag == "":
		msg = fmt.Sprintf("import of %s: not in the standard library, and grader.image_tag is not set, so no third-party package is guaranteed", module)
	case known:
		msg = fmt.Sprintf("import of %s is not in image %s (nor in the standard library)", module, tag)
	default:
		msg = fmt.Sprintf("import of %s cannot be checked against image_tag %q, which gradegate does not know", module, tag)
	}
	var hints []string
	for _, t := range providers(top) {
		if t == tag {
			continue
		}
		p, _ := importer(t, top)
		hints = append(hints, fmt.Sprintf("image_tag %q provides it (%s)", t, p.Requirement()))
	}
	if len(hints) > 0 {
		msg += "; " + strings.Join(hints, ", ")
	}
	return msg
}

// networkModule returns the network module an import brings in, or "".
// `import urllib` alone does not count (it does not load urllib.request);
// `from urllib import request` does.
func networkModule(im pyImport) string {
	if im.Level > 0 {
		return ""
	}
	names := []string{im.Module}
	for _, n := range im.Names {
		names = append(names, im.Module+"."+n)
	}
	for _, name := range names {
		for _, net := range networkModules() {
			if name == net || strings.HasPrefix(name, net+".") {
				return net
			}
		}
	}
	return ""
}

// sortFindings orders findings by line, then code, so output is stable.
func sortFindings(fs []manifest.Finding) {
	slices.SortStableFunc(fs, func(a, b manifest.Finding) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Code, b.Code), cmp.Compare(a.Message, b.Message))
	})
}
