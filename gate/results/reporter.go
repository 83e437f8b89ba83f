package results

import (
	"context"
)

// Reporter publishes a finished run somewhere (a GitHub check run, …).
// A reporting error never changes the verdict; the caller exits non-zero.
type Reporter interface {
	Report(ctx context.Context, res *Results) error
}
