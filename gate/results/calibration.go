package results

// ReasonFalseFail: more fails whose human_score is 1 than
// gate.calibration.max_false_fail allows, overall or in a slice.
const ReasonFalseFail = "false_fail"
