package main

import (
	"github.com/gradegate/gradegate/gate/render"
	"github.com/gradegate/gradegate/manifest"
)

// writeFailure writes the problems of a failed command on stdout in the
// format asked for; the human format leaves them to stderr alone.
func (a *app) writeFailure(cmd string, code int, err error) error {
	findings := render.FailureFindings(render.Problems(err), code)
	switch a.format {
	case formatJSON:
		if cmd == "validate" {
			return render.JSON(a.stdout, &render.Validation{Schema: render.ValidationSchema, Findings: findings, Warnings: []manifest.Finding{}})
		}
		return render.JSON(a.stdout, render.Failure{Schema: render.FailureSchema, Command: cmd, ExitCode: code, Findings: findings})
	case formatMarkdown:
		if cmd == "validate" {
			return render.ValidationMarkdown(a.stdout, &render.Validation{Schema: render.ValidationSchema, Findings: findings, Warnings: []manifest.Finding{}}, render.MarkdownOptions{})
		}
		return render.FailureMarkdown(a.stdout, cmd, code, code == exitInput, findings)
	}
	return nil
}
