package worker

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/gradegate/gradegate/gate/grading"
	"github.com/gradegate/gradegate/gate/sandbox"
)

// This file holds what the worker package says on every operating system:
// its settings and its load error. The pool itself is Linux's.

// Isolation modes (manifest grader.isolation).
const (
	IsolationWorker = "worker" // one process serves many cases, recycled
	IsolationCase   = "case"   // the loaded process forks a fresh child per case
)

// Contracts (manifest grader.contract).
const (
	ContractSample = "sample"
	ContractBatch  = "batch"
)

// Defaults for zero Config fields.
const (
	DefaultOutputLimit = 8 << 10
	DefaultTimeout     = 120
	DefaultLoadTimeout = 30
	DefaultMetric      = "score"
)

// Config is what a Pool needs to run one grader.
type Config struct {
	Source         []byte // the exact grader bytes whose digest was checked
	SourceName     string // the file name tracebacks show, e.g. "grader.py"
	Contract       string // ContractSample (default) or ContractBatch
	Metric         string // gating score name in {"scores": {...}}; default "score"
	TimeoutSeconds int    // per case (sample) or per batch; default 120
	MemoryMB       int    // per grader process; 0: no limit
	Isolation      string // IsolationWorker (default) or IsolationCase
	Workers        int    // concurrent grader processes; default runtime.NumCPU()
	Python         Python // resolved interpreter (ResolvePython)
	Sandbox        *sandbox.Sandbox
	OutputLimit    int // bytes of grader output kept per case; default 8 KiB
	// RecycleAfter, when above 0, is how many cases one process serves
	// before a fresh one replaces it. By default (0) a process that keeps
	// grading well is replaced only when its CPU time or memory growth
	// calls for it (see cpuBudget). A crash, a timeout, a memory error, a
	// sandbox refusal or a child process left running always replaces it;
	// a result the grader returned, valid or not, and an exception never
	// do. When the sandbox has a second slot (uid) for every worker, a
	// replacement due by count starts loading shortly before, so
	// recycling does not stall grading.
	RecycleAfter int
	// LoadTimeoutSeconds bounds starting the interpreter and running the
	// grader's module code (imports of large packages take seconds, and are
	// not a case's time); default DefaultLoadTimeout.
	LoadTimeoutSeconds int
	// BatchSize is how many tasks go into one grade_batch call (contract
	// batch); 0 puts all tasks of one Grade call into one batch, so a caller
	// that wants batches of one (canaries) calls Grade once per task.
	BatchSize int
	// HashSeed, when set, is the PYTHONHASHSEED of every grader process (a
	// decimal in 0..4294967295): str and bytes hashes, and with them the
	// order of sets, are then alike in every process. Empty leaves Python's
	// own random seed per process (isolated mode ignores PYTHONHASHSEED).
	HashSeed string
	// FirstSlot is the first sandbox slot (and with it the uid and scratch
	// directory) the pool's processes use: slots FirstSlot to
	// FirstSlot+Workers-1, and the next Workers for replacements loading
	// beside them. Pools that run at the same time on one Sandbox must use
	// slots apart, so that no process of one shares a uid with the other.
	FirstSlot int
	// ScratchBytes is the disk each process's scratch directory may hold
	// (sandbox.Spec.ScratchBytes); 0 is the sandbox's default, 1 GiB.
	ScratchBytes int64
	// StartAll makes New start every worker's process: the first before
	// it returns (its load error is New's), the others in the background,
	// so the first cases of a stream do not wait for a process to load.
	// Without it a worker's process starts with the first request that
	// needs it, and a short stream (canaries) starts none it does not use.
	StartAll bool
	// Preprocess, when set, runs before the grader on every task's item
	// (canaries' too), in the same process.
	Preprocess *Preprocess
	// MKA1, when set, runs the grader under MKA1's contract
	// (grader.platform: mka1): its sample and item shapes, return rules
	// and batch shape. nil: OpenAI's.
	MKA1 *MKA1
	// Broker makes the model calls the grader asks for through ctx
	// (ctx.responses_create, ctx.embeddings_create); nil: a grader that
	// calls gets a ModelCallError.
	Broker grading.ModelBroker
	// MaxModelCalls bounds the calls of one request (a case, or a batch)
	// through Broker; past it the grader gets ModelCallBudgetExceeded.
	MaxModelCalls int
}

// MKA1 is what MKA1's contract fills in that gradegate's stored samples
// may lack. The worker reads it as JSON (worker.py, mka1_*).
type MKA1 struct {
	// TaskID and RunID fill sample["task_id"], item["task_id"] and
	// sample["run_id"] when the stored sample has none.
	TaskID string `json:"task_id"`
	RunID  string `json:"run_id"`
	// Model fills sample["model"] when the stored sample has none.
	Model string `json:"model,omitempty"`
	// TargetField is the item field that fills item["target"]; "" for the
	// worker's default order.
	TargetField string `json:"target_field,omitempty"`
	// Metrics are the declared metric ids: grade_batch's others are
	// dropped. nil keeps every metric.
	Metrics []string `json:"metrics"`
}

// shape is how the pool writes its requests.
func (c Config) shape() requestShape {
	return requestShape{contract: c.Contract, caseIDs: c.MKA1 != nil}
}

// LoadError is returned by New when the grader cannot be loaded. Err says
// why, with the grader line where known; Output is what the grader printed
// while loading.
type LoadError struct {
	Err    grading.CaseError
	Output string
	// Preprocess says the preprocessor (Config.Preprocess) is what failed
	// to load; its line is then in the message.
	Preprocess bool
}

func (e *LoadError) Error() string {
	who := "grader"
	if e.Preprocess {
		who = "preprocessor"
	}
	msg := fmt.Sprintf("%s failed to load (%s): %s", who, e.Err.Class, e.Err.Message)
	if e.Err.Line > 0 {
		msg += fmt.Sprintf(" (line %d)", e.Err.Line)
	}
	return msg
}

// fillShared fills the defaults both pools share and appends to errs what
// is wrong with the settings they share; each pool checks its own on top.
func (cfg *Config) fillShared(errs []error) []error {
	if cfg.Python.Executable == "" {
		errs = append(errs, errors.New("no python interpreter"))
	}
	if cfg.SourceName == "" {
		cfg.SourceName = "grader.py"
	}
	if cfg.Contract == "" {
		cfg.Contract = ContractSample
	}
	if cfg.Contract != ContractSample && cfg.Contract != ContractBatch {
		errs = append(errs, fmt.Errorf("contract %q: want sample or batch", cfg.Contract))
	}
	if cfg.Isolation == "" {
		cfg.Isolation = IsolationWorker
	}
	if cfg.Isolation != IsolationWorker && cfg.Isolation != IsolationCase {
		errs = append(errs, fmt.Errorf("isolation %q: want worker or case", cfg.Isolation))
	}
	if cfg.Metric == "" {
		cfg.Metric = DefaultMetric
	}
	if cfg.TimeoutSeconds <= 0 {
		cfg.TimeoutSeconds = DefaultTimeout
	}
	if cfg.LoadTimeoutSeconds <= 0 {
		cfg.LoadTimeoutSeconds = DefaultLoadTimeout
	}
	if cfg.MemoryMB < 0 {
		errs = append(errs, fmt.Errorf("memory_mb %d is negative", cfg.MemoryMB))
	}
	if cfg.Workers <= 0 {
		cfg.Workers = runtime.NumCPU()
	}
	if cfg.OutputLimit <= 0 {
		cfg.OutputLimit = DefaultOutputLimit
	}
	if cfg.RecycleAfter < 0 {
		cfg.RecycleAfter = 0
	}
	return errs
}
