package dataset

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"strings"

	"github.com/gradegate/gradegate/manifest/dataset/internal/jsonschema"

	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/input"
)

// maxSchemaReasons bounds how many violations one finding lists; the rest
// are counted.
const maxSchemaReasons = 5

// itemSchema is the compiled dataset.schema.
type itemSchema struct {
	file   string
	schema *jsonschema.Schema
}

// fsSchemaLoader resolves "file:///suite/name" references to files in the
// schema's own folder, so a schema may $ref a sibling file; any other scheme
// or place is refused (graders and their checks run without network, and so
// does this). The schema is given a virtual location because its real path
// may climb out of the working directory ("../shared/item.schema.json"),
// which a file URL cannot express.
type fsSchemaLoader struct {
	fsys fs.FS
	dir  string // the schema's folder in fsys
}

// schemaRoot is the virtual folder the schema and its siblings live in.
const schemaRoot = "/suite/"

func (l fsSchemaLoader) Load(rawURL string) (any, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("schema reference %q: %w", rawURL, err)
	}
	if u.Scheme != "file" {
		return nil, fmt.Errorf("schema reference %q: only files next to the schema can be referenced", rawURL)
	}
	rel, ok := strings.CutPrefix(u.Path, schemaRoot)
	if !ok || rel == "" {
		return nil, fmt.Errorf("schema reference %q: only files next to the schema can be referenced", rawURL)
	}
	data, err := input.ReadFile(l.fsys, path.Join(l.dir, rel), input.Schema, 0)
	if err != nil {
		return nil, fmt.Errorf("schema reference %q: %w", rawURL, err)
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(data))
}

// compileSchema reads and compiles a JSON Schema (draft 2020-12 unless the
// schema's $schema says otherwise). A schema that cannot be read or compiled
// is an input error.
func compileSchema(fsys fs.FS, file string, m *manifest.Manifest) (*itemSchema, error) {
	data, err := readFile(fsys, file, m, "dataset.schema")
	if err != nil {
		return nil, err
	}
	schemaErr := func(err error) error {
		return &manifest.Error{File: file, Msg: fmt.Sprintf("not a usable JSON Schema: %v", err), Err: err}
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, schemaErr(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(fsSchemaLoader{fsys: fsys, dir: path.Dir(file)})
	loc := "file://" + schemaRoot + path.Base(file)
	if err := c.AddResource(loc, doc); err != nil {
		return nil, schemaErr(err)
	}
	sch, err := c.Compile(loc)
	if err != nil {
		return nil, schemaErr(err)
	}
	return &itemSchema{file: file, schema: sch}, nil
}

// check validates one item; ok is false when the item satisfies the schema.
func (s *itemSchema) check(r *caseRow) (manifest.Finding, bool) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(r.Item))
	if err == nil {
		err = s.schema.Validate(doc)
	}
	if err == nil {
		return manifest.Finding{}, false
	}
	var reasons []string
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		reasons = leafReasons(ve, nil)
	} else {
		reasons = []string{err.Error()}
	}
	msg := strings.Join(reasons[:min(len(reasons), maxSchemaReasons)], "; ")
	if n := len(reasons) - maxSchemaReasons; n > 0 {
		msg += fmt.Sprintf("; and %d more", n)
	}
	return manifest.Finding{
		Code: CodeSchemaViolation, Severity: manifest.SeverityHold,
		File: r.File, Line: r.Line, CaseID: r.ID,
		Message: fmt.Sprintf("item does not satisfy %s: %s", s.file, msg),
	}, true
}

// leafReasons flattens a validation error tree to its leaves, each as
// "at '/json/pointer': reason".
func leafReasons(ve *jsonschema.ValidationError, out []string) []string {
	if len(ve.Causes) == 0 {
		return append(out, ve.Error())
	}
	for _, c := range ve.Causes {
		out = leafReasons(c, out)
	}
	return out
}
