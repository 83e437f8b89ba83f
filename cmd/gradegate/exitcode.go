package main

// Exit codes of every command, as the README's "Exit codes" lists them.
// Nothing but exitPass is a pass.
const (
	exitPass     = 0 // the gate passed (or a command found nothing)
	exitHold     = 1 // the gate holds (or a command found something)
	exitInput    = 2 // the manifest or an input cannot be used
	exitInternal = 3 // gradegate itself failed, or the sandbox could not be established
)
