package gate

import (
	"time"

	"github.com/gradegate/gradegate/gate/judge"
	"github.com/gradegate/gradegate/gate/results"
)

// How the stages of a run make a Python grader's ctx model calls
// (ctx.responses_create, ctx.embeddings_create): the run's own grading
// through the judge cache as the flags say; mutation testing replays what
// the cache and the run recorded, with no network; the determinism check
// asks again with the cache off only when the manifest writes
// gate.determinism and a key is set, as for model graders, and otherwise
// replays too.

// brokerMode is how one stage's broker calls.
type brokerMode int

const (
	brokerRun      brokerMode = iota // the flags' cache, the network for misses
	brokerReplay                     // the cache read and the run's answers; no network
	brokerCacheOff                   // every call asked again
)

// newBroker builds the broker of one stage of a suite's run. The run's
// memo is made with the first.
func (a *Host) newBroker(s *Suite, f JudgeOptions, mode brokerMode) (*judge.Broker, error) {
	cfg, err := a.judgeConfig(f)
	if err != nil {
		return nil, err
	}
	if s.memo == nil {
		s.memo = judge.NewMemo()
	}
	bc := judge.BrokerConfig{Config: cfg, JudgeModel: s.Manifest.JudgeModel, EmbeddingModel: s.Manifest.EmbeddingModel,
		Timeout: time.Duration(s.Manifest.Grader.TimeoutSeconds) * time.Second}
	switch mode {
	case brokerRun:
		bc.Memo = s.memo
	case brokerReplay:
		bc.Memo, bc.Replay = s.memo, true
	case brokerCacheOff:
		bc.Cache = nil
	}
	return judge.NewBroker(bc), nil
}

// runBroker is the suite's broker for the run's own grading, made once.
func (a *Host) runBroker(s *Suite, f JudgeOptions) (*judge.Broker, error) {
	if s.broker != nil || s.Manifest.Grader.Judge != nil {
		return s.broker, nil
	}
	b, err := a.newBroker(s, f, brokerRun)
	if err != nil {
		return nil, err
	}
	s.broker = b
	return b, nil
}

// addBrokerUsage adds what a broker's calls cost to a run's judge block;
// a run whose grader made no ctx call keeps none.
func addBrokerUsage(u **results.JudgeUsage, b *judge.Broker) {
	if b == nil {
		return
	}
	x := b.Usage()
	if x.Calls == 0 && x.Cached == 0 {
		return
	}
	if *u == nil {
		*u = x
		return
	}
	(*u).Calls += x.Calls
	(*u).Retries += x.Retries
	(*u).Cached += x.Cached
	(*u).Tokens.Input += x.Tokens.Input
	(*u).Tokens.Output += x.Tokens.Output
	(*u).CachedTokens.Input += x.CachedTokens.Input
	(*u).CachedTokens.Output += x.CachedTokens.Output
}
