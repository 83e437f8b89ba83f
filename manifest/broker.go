package manifest

// The keys of model calls made from Python: ctx.responses_create and
// ctx.embeddings_create, which the gate makes on the grader's behalf.

// ContractModelBacked is MKA1's contract of a grader whose grade takes ctx
// (model calls through the gate). It is the sample contract otherwise: the
// parser sets Grader.Contract to "sample" and Grader.ModelBacked.
const ContractModelBacked = "model_backed"

// Bounds and default of grader.max_model_calls, as MKA1 documents them.
const (
	DefaultMaxModelCalls = 64
	MaxModelCallsLimit   = 500
)

// AutoModel is the model name that resolves to the manifest's judge_model
// or embedding_model.
const AutoModel = "auto"

// maxModelCalls decodes grader.max_model_calls, on every platform: the
// ctx calls one grader execution may make.
func (d *decoder) maxModelCalls(s *section, g *Grader) {
	g.MaxModelCalls = DefaultMaxModelCalls
	if v, ok := s.integer("max_model_calls", 0, MaxModelCallsLimit); ok {
		g.MaxModelCalls = v
	}
}

// brokerModels decodes the top-level judge_model and embedding_model.
func (d *decoder) brokerModels(top *section) (judgeModel, embeddingModel string) {
	judgeModel, _ = top.str("judge_model")
	embeddingModel, _ = top.str("embedding_model")
	for _, k := range []struct{ key, v string }{{"judge_model", judgeModel}, {"embedding_model", embeddingModel}} {
		if n := top.node(k.key); n != nil && k.v == "" {
			d.fail(n.Line, k.key, "must name a model (for example gpt-4.1-mini-2025-04-14), got an empty string")
		}
	}
	return judgeModel, embeddingModel
}
