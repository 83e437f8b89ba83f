package action

import (
	"crypto/rand"
	"fmt"
	"io"
)

// commandWindow keeps GitHub's runner from reading workflow commands in
// anything gradegate prints, except its own. stop writes
// "::stop-commands::<token>", after which the runner reads no "::command::"
// and no "##[command]" until a line "::<token>::"; every Write (one command
// of go-githubactions) is wrapped in such a resume and a new stop, with a
// fresh random token each time, so text printed between them (a grader's
// message, a case id, a manifest key) never speaks for gradegate.
// (https://docs.github.com/actions/reference/workflows-and-actions/workflow-commands#stopping-and-starting-workflow-commands)
type commandWindow struct {
	w     io.Writer
	token string // the token commands are stopped with; "" while they run
}

func newCommandWindow(w io.Writer) *commandWindow { return &commandWindow{w: w} }

// stop stops command processing with a fresh token.
func (c *commandWindow) stop() {
	if c.token != "" {
		return
	}
	c.token = rand.Text()
	fmt.Fprintf(c.w, "::stop-commands::%s\n", c.token)
}

// close resumes command processing for the steps that follow.
func (c *commandWindow) close() {
	if c.token != "" {
		fmt.Fprintf(c.w, "::%s::\n", c.token)
		c.token = ""
	}
}

// Write writes one of gradegate's own commands with processing resumed.
func (c *commandWindow) Write(p []byte) (int, error) {
	stopped := c.token != ""
	c.close()
	n, err := c.w.Write(p)
	if stopped {
		c.stop()
	}
	return n, err
}
