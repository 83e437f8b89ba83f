package results

import "github.com/gradegate/gradegate/manifest"

// ReasonPolicyWeakened holds a change that protects less than its base:
// the weakenings of the manifest against the base manifest (run
// --base-manifest), its dataset's labels and cases against the base's, and
// the base results' cases of mandatory slices this run no longer has (run
// --baseline). It is a warning instead when the manifest acknowledges them
// (gate.weakening_reason, in other words than the base's).
const ReasonPolicyWeakened = "policy_weakened"

// Policy is what this change weakened against its base, and the reason
// the manifest gives; nil when nothing was compared and no reason is
// written.
type Policy struct {
	// Base is the base manifest compared with ("" when only --baseline
	// was given).
	Base       string               `json:"base,omitempty"`
	Weakenings []manifest.Weakening `json:"weakenings"`
	// Reason is the manifest's gate.weakening_reason; Acknowledged says
	// whether it acknowledged the weakenings (it is set, and not the
	// base's own).
	Reason       string `json:"reason,omitempty"`
	Acknowledged bool   `json:"acknowledged"`
	// Notes say what could not be compared (a base dataset not readable).
	Notes []string `json:"notes,omitempty"`
}
