package verdict

import (
	"fmt"

	"github.com/gradegate/gradegate/gate/results"
)

func (d *decider) digests() {
	for _, m := range d.ev.DigestMismatches {
		var msg string
		switch {
		case m.Concealed && m.Want == "":
			msg = fmt.Sprintf("%s: %s is not pinned; the file is outside the repository tree, so its digest is not shown", m.File, m.Key)
		case m.Concealed:
			msg = fmt.Sprintf("%s: the manifest pins %s = %s but the file's bytes are other ones; the file is outside the repository tree, so their digest is not shown (run gradegate pin where the file can be read, if the change is intended)",
				m.File, m.Key, m.Want)
		case m.Want == "":
			msg = fmt.Sprintf("%s: %s is not pinned; its bytes are %s", m.File, m.Key, m.Got)
		case m.Got == "":
			msg = fmt.Sprintf("%s: the manifest pins %s = %s but no digest of the file was recorded", m.File, m.Key, m.Want)
		default:
			msg = fmt.Sprintf("%s: the manifest pins %s = %s but the file's bytes are %s (run gradegate pin if the change is intended)",
				m.File, m.Key, m.Want, m.Got)
		}
		d.hold(results.Reason{Code: results.ReasonDigestMismatch, File: m.File, Message: msg})
	}
}
