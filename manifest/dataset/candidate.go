package dataset

// maxCandidateModels bounds the distinct sample models a summary names;
// rows of further models are counted together.
const maxCandidateModels = 10

// CandidateModels counts the samples by the model that wrote them: the
// "model" string of each sample object (as OpenAI's responses carry it),
// in order of first appearance.
type CandidateModels struct {
	Models []CandidateModel `json:"models"`
	// Other counts the samples of models beyond the first
	// maxCandidateModels.
	Other int `json:"other,omitempty"`
}

// CandidateModel is one model and how many samples it wrote.
type CandidateModel struct {
	Model   string `json:"model"`
	Samples int    `json:"samples"`
}

func (c *CandidateModels) add(sample []byte) {
	raw := objectField(sample, "model")
	model, ok := stringValue(raw)
	if !ok || model == "" {
		return
	}
	for i := range c.Models {
		if c.Models[i].Model == model {
			c.Models[i].Samples++
			return
		}
	}
	if len(c.Models) == maxCandidateModels {
		c.Other++
		return
	}
	c.Models = append(c.Models, CandidateModel{Model: cutValue(model), Samples: 1})
}
