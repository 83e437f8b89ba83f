package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/gradegate/gradegate/gate/mutate"
	"github.com/gradegate/gradegate/manifest/input"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/judge"
	"github.com/gradegate/gradegate/gate/render"
	"github.com/gradegate/gradegate/gate/shadow"
	"github.com/gradegate/gradegate/gate/shard"
	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/dataset"
)

// shadowJudge is `shadow` for a model grader: --base names another
// manifest whose grader block is the base (another model or another
// prompt); the cases and canaries are the head manifest's. Each grader is
// identified by the digest of its canonical keys.
func (a *Host) shadowJudge(ctx context.Context, s *Suite, set *dataset.Set, basePath string, f GraderOptions, limits input.Limits) (*shadow.Report, error) {
	base, err := LoadSuite(basePath, limits)
	if err != nil {
		return nil, err
	}
	if base.Manifest.Grader.Judge == nil {
		return nil, &manifest.Error{File: base.Manifest.File, Line: base.Manifest.Line("grader.type"), Key: "grader.type",
			Msg: "the base of a model grader's shadow must be a manifest with a model grader (score_model or label_model)"}
	}
	head := s.Manifest.Grader
	// The head's timeout and budget apply to both sides.
	bg := base.Manifest.Grader
	bg.TimeoutSeconds = head.TimeoutSeconds
	bj := *bg.Judge
	bj.MaxCalls = head.Judge.MaxCalls
	bg.Judge = &bj
	baseSrc, err := json.Marshal(manifest.CanonicalModelGrader(bg))
	if err != nil {
		return nil, err
	}
	headSrc, err := json.Marshal(manifest.CanonicalModelGrader(head))
	if err != nil {
		return nil, err
	}
	graders := []struct {
		src []byte
		g   manifest.Grader
	}{{baseSrc, bg}, {headSrc, head}}
	var usage []*judge.Judge
	newRunner := func(ctx context.Context, src []byte) (grading.Runner, func(), error) {
		for _, gr := range graders {
			if !bytes.Equal(src, gr.src) {
				continue
			}
			j, err := a.newJudge(gr.g, f.Judge)
			if err != nil {
				return nil, nil, err
			}
			if err := planJudge(j, judgeTasks(s.Manifest, set, shard.Shard{})); err != nil {
				return nil, nil, err
			}
			usage = append(usage, j)
			return j, func() {}, nil
		}
		return nil, nil, errors.New("shadow: no model grader for these bytes")
	}
	rep, err := shadow.Run(ctx, baseSrc, headSrc, s.Manifest, set.Cases, newRunner)
	if err != nil {
		return nil, err
	}
	for i, j := range usage {
		side := [...]string{"base", "head"}[min(i, 1)]
		fmt.Fprintf(a.stderr, "gradegate shadow: %s %s\n", side, render.JudgeLine(j.Usage()))
	}
	return rep, nil
}

// shadowPart says which Python part of the grader --base replaces, and the
// base file: the grader's own source, or for a multi grader with more than
// one python sub-grader the one named as --base NAME=OLD.py. The other
// parts keep their pinned sources, so the comparison is of the combined
// score.
func shadowPart(parts []part, base string) (int, string, error) {
	if len(parts) == 1 {
		return 0, base, nil
	}
	names := make([]string, len(parts))
	for i, p := range parts {
		names[i] = p.name
	}
	if name, file, ok := strings.Cut(base, "="); ok {
		if i := slices.Index(names, name); i >= 0 && file != "" {
			return i, file, nil
		}
	}
	return 0, "", fmt.Errorf("%w: --base %s: the multi grader has python sub-graders %s; name the one the old source is for, as --base NAME=OLD_GRADER.py",
		manifest.ErrInput, base, strings.Join(names, ", "))
}

// Shadow grades the suite's cases and canaries with an old and the current
// grader source (the shadow command): base is the old source's file (for
// a multi grader with several python sub-graders NAME=FILE), or for a model
// grader a manifest whose grader block is the base.
func (a *Host) Shadow(ctx context.Context, s *Suite, base string, o GraderOptions, limits input.Limits) (*shadow.Report, error) {
	set, err := s.loadCases()
	if err != nil {
		return nil, err
	}
	if s.Manifest.Grader.Judge != nil {
		return a.shadowJudge(ctx, s, set, base, o, limits)
	}
	if s.noPython() {
		return nil, notForManifestGraders(s.Manifest, "shadow --base OLD_GRADER.py")
	}
	parts, err := s.parts()
	if err != nil {
		return nil, err
	}
	k, basePath, err := shadowPart(parts, base)
	if err != nil {
		return nil, err
	}
	head := parts[k].src
	old, err := input.ReadFile(input.Host{}, filepath.ToSlash(basePath), input.Grader, limits.Of(input.Grader))
	if err != nil {
		return nil, manifest.ReadError(basePath, 0, "", "cannot read the base grader", err)
	}
	env, err := a.graders(ctx, s, o)
	if err != nil {
		return nil, err
	}
	defer env.close()
	return shadow.Run(ctx, old, head, s.Manifest, set.Cases, env.runnerFor(k))
}

// Mutate measures the grader's mutation score on the labeled cases (the
// mutate command). A model grader has no source whose mutants its canaries
// could kill; its canaries and its calibration are what test it.
func (a *Host) Mutate(ctx context.Context, s *Suite, o GraderOptions) (*mutate.Report, error) {
	if s.Manifest.Grader.Judge != nil {
		return nil, notForModelGraders(s.Manifest, "mutation testing (there is no grader source to mutate; the canaries and calibration against human labels test a model grader)")
	}
	if s.noPython() {
		return nil, notForManifestGraders(s.Manifest, "mutation testing")
	}
	set, err := s.loadCases()
	if err != nil {
		return nil, err
	}
	return a.mutationScore(ctx, s, set, o, nil, 0)
}
