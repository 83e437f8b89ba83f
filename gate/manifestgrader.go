package gate

import (
	"context"
	"fmt"
	"time"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/judge"
	"github.com/gradegate/gradegate/gate/multi"
	"github.com/gradegate/gradegate/gate/verdict"
	"github.com/gradegate/gradegate/manifest"
)

// A multi grader without a python sub-grader is written in the manifest
// alone (string_check, text_similarity and model sub-graders, combined by
// calculate_output): the gate grades it itself, with no sandbox and no
// interpreter, and gates its whole output as it gates any grader's, the
// canaries, calibration and determinism included. Nothing of it can be
// mutated.

// noPython reports whether the suite's grader is such a multi grader.
func (s *Suite) noPython() bool {
	mg := s.Manifest.Grader.Multi
	return mg != nil && mg.Python == ""
}

// manifestRunner is the runner of such a grader; broker asks a cosine
// text_similarity's embeddings.
func (s *Suite) manifestRunner(broker *judge.Broker) grading.Runner {
	var b grading.ModelBroker
	if broker != nil {
		b = broker
	}
	g := s.Manifest.Grader
	return grading.Ranged(multi.WrapParts(nil, nil, g.Multi, s.models, b), g.Range)
}

// notForManifestGraders is how a command says it does not apply to a
// grader with no Python source.
func notForManifestGraders(m *manifest.Manifest, what string) error {
	return &manifest.Error{File: m.File, Line: m.Line("grader.graders"), Key: "grader.graders",
		Msg: fmt.Sprintf("%s does not apply to a multi grader without a python sub-grader: it has no Python source", what)}
}

// checkManifestDeterminism grades the canaries and the sample twice, as
// checkDeterminism does for Python: the model sub-graders' answers and
// the cosine embeddings are those of the run (replayed), so what it
// tests is the gate's own local sub-graders and formula.
func (a *Host) checkManifestDeterminism(ctx context.Context, s *Suite, sample *DeterminismSample, f GraderOptions, ev *verdict.Evidence) error {
	if sample == nil {
		return nil
	}
	start := time.Now()
	d, err := sample.Check(ctx, func(ctx context.Context, hashSeed uint32) (grading.Runner, func(), error) {
		var b *judge.Broker
		if s.broker != nil {
			var err error
			if b, err = a.newBroker(s, f.Judge, brokerReplay); err != nil {
				return nil, nil, err
			}
		}
		return s.manifestRunner(b), func() {}, nil
	})
	if err != nil {
		return err
	}
	d.DurationMS = float64(time.Since(start).Microseconds()) / 1000
	ev.Determinism = d
	return nil
}
