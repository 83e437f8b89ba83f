package main

import (
	"fmt"

	"github.com/gradegate/gradegate/gate/render"
)

// colorMode is the --color value: auto (the default), always or never.
type colorMode string

func (c *colorMode) String() string {
	if *c == "" {
		return "auto"
	}
	return string(*c)
}

func (c *colorMode) Set(s string) error {
	switch s {
	case "auto", "always", "never":
		*c = colorMode(s)
		return nil
	}
	return fmt.Errorf("want auto, always or never, got %q", s)
}

// colorOptions decides whether the terminal output is colored: --color
// always or never says so; auto follows the environment's conventions
// (NO_COLOR off, CLICOLOR_FORCE on, TERM=dumb off) and otherwise colors
// a terminal only.
func (a *app) colorOptions() render.Options {
	var on bool
	switch a.color {
	case "always":
		on = true
	case "never":
		on = false
	default:
		on = render.ColorEnabled(a.getenv, render.IsTerminal(a.stdout))
	}
	if g, ok := a.stdout.(*render.Guard); ok && on {
		// Off a terminal stdout goes through the log's printer, which
		// would show the colors as escapes.
		g.PassColors()
	}
	return render.Options{Color: on}
}
