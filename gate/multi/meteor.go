package multi

import (
	_ "embed"
	"encoding/json"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/manifest"
)

// MeteorSource is the grader that computes text_similarity's meteor metric
// (nltk's meteor_score, which needs nltk and its WordNet data) in the
// sandbox. Its tasks are built by MeteorTask.
//
//go:embed meteor.py
var MeteorSource []byte

// MeteorFile is the file name MeteorSource runs under.
const MeteorFile = "gradegate_meteor.py"

// Meteor reports whether a sub-grader is a meteor text_similarity, which
// runs in a pool of its own with MeteorSource.
func Meteor(sg manifest.SubGrader) bool {
	return sg.Type == manifest.SubTextSimilarity && sg.Metric == "meteor"
}

// MeteorTask is the task the meteor grader gets for t: the sub-grader's
// input and reference filled from t's sample and item. A template that
// cannot be filled is the error; the task then carries empty texts, so
// the batch keeps its order, and the error is the case's.
func MeteorTask(sg manifest.SubGrader, t grading.Task) (grading.Task, error) {
	in, err := Templates(sg, t.Sample, t.Item)
	item, _ := json.Marshal(map[string]string{"input": in[0], "reference": in[1]})
	return grading.Task{ID: t.ID, Sample: json.RawMessage(`{}`), Item: item}, err
}
