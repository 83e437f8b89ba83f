package gate

import (
	"context"

	"github.com/gradegate/gradegate/canary/hosted"
	"github.com/gradegate/gradegate/gate/results"
	"github.com/gradegate/gradegate/manifest"
)

// hostedParity runs the canaries on OpenAI's hosted grader and compares.
func (a *Host) hostedParity(ctx context.Context, s *Suite, canaries []results.CanaryResult, baseURL string) (*hosted.Report, error) {
	g, err := s.hostedGrader()
	if err != nil {
		return nil, err
	}
	c := hosted.NewClient(baseURL, a.getenv("OPENAI_API_KEY"))
	return hosted.Parity(ctx, c, g, s.Manifest.Canaries, hostedLocal(canaries), s.Manifest.Grader.PassThreshold)
}

// hostedGrader is the grader as OpenAI's hosted grader takes it: a Python
// grader with exactly the pinned bytes, or a multi grader in OpenAI's own
// shape, each python sub-grader with its pinned bytes and every other
// sub-grader with its keys as written.
func (s *Suite) hostedGrader() (hosted.Grader, error) {
	parts, err := s.parts()
	if err != nil {
		return hosted.Grader{}, err
	}
	g := s.Manifest.Grader
	if g.Multi == nil {
		return hosted.Grader{Type: "python", Name: g.Name, Source: string(parts[0].src), ImageTag: g.ImageTag}, nil
	}
	src := map[string]string{}
	for _, p := range parts {
		src[p.name] = string(p.src)
	}
	out := hosted.Grader{Type: manifest.TypeMulti, Name: g.Name, CalculateOutput: g.Multi.CalculateOutput, Graders: map[string]hosted.Grader{}}
	for _, sg := range g.Multi.Graders {
		sub := hosted.Grader{Type: sg.Type, Name: sg.Name}
		switch {
		case sg.Type == manifest.SubPython:
			sub.Source, sub.ImageTag = src[sg.Name], sg.ImageTag
		case sg.Model != nil:
			sub.Fields = hostedModelFields(sg.Model)
		default:
			sub.Fields = map[string]any{"input": sg.Input, "reference": sg.Reference}
			if sg.Type == manifest.SubStringCheck {
				sub.Fields["operation"] = sg.Operation
			} else {
				sub.Fields["evaluation_metric"] = sg.Metric
			}
		}
		out.Graders[sg.Name] = sub
	}
	return out, nil
}

// hostedModelFields are a score_model or label_model sub-grader's keys in
// OpenAI's shape: model, input, sampling_params, and range or labels and
// passing_labels. The endpoint, timeout and budget are gradegate's own and
// stay here.
func hostedModelFields(g *manifest.Grader) map[string]any {
	j := g.Judge
	input := make([]map[string]string, len(j.Input))
	for i, m := range j.Input {
		input[i] = map[string]string{"role": m.Role, "content": m.Content}
	}
	f := map[string]any{"model": j.Model, "input": input, "sampling_params": j.SamplingParams}
	if g.Type == manifest.TypeLabelModel {
		f["labels"], f["passing_labels"] = j.Labels, j.PassingLabels
	} else {
		f["range"] = j.Range
	}
	return f
}

// hostedPreprocessError refuses canary --hosted beside a preprocessor:
// OpenAI's hosted grader has none, so it would grade rows the local
// canaries never saw, and a difference would say nothing about the grader.
func hostedPreprocessError(m *manifest.Manifest) error {
	return &manifest.Error{File: m.File, Line: m.Line("preprocess"), Key: "preprocess", Msg: "canary --hosted cannot compare: OpenAI's hosted grader runs no preprocessor, and the local canaries pass through this one; run the canaries without --hosted"}
}
