package manifest

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// Formula is a multi grader's calculate_output, parsed: numbers, sub-grader
// names, + - * / and parentheses, unary minus, and the functions min, max
// (one or more arguments), abs, floor, ceil, exp, sqrt and log (one).
type Formula struct {
	text string
	root formulaNode
}

type formulaNode interface {
	eval(vals map[string]float64) float64
}

type numNode float64
type nameNode string
type negNode struct{ x formulaNode }
type binNode struct {
	op   byte
	l, r formulaNode
}
type callNode struct {
	fn   string
	args []formulaNode
}

func (n numNode) eval(map[string]float64) float64    { return float64(n) }
func (n nameNode) eval(v map[string]float64) float64 { return v[string(n)] }
func (n negNode) eval(v map[string]float64) float64  { return -n.x.eval(v) }

func (n binNode) eval(v map[string]float64) float64 {
	l, r := n.l.eval(v), n.r.eval(v)
	switch n.op {
	case '+':
		return l + r
	case '-':
		return l - r
	case '*':
		return l * r
	}
	return l / r // a zero divisor gives Inf or NaN, which Eval refuses
}

func (n callNode) eval(v map[string]float64) float64 {
	xs := make([]float64, len(n.args))
	for i, a := range n.args {
		xs[i] = a.eval(v)
	}
	switch n.fn {
	case "min":
		out := xs[0]
		for _, x := range xs[1:] {
			out = math.Min(out, x)
		}
		return out
	case "max":
		out := xs[0]
		for _, x := range xs[1:] {
			out = math.Max(out, x)
		}
		return out
	case "abs":
		return math.Abs(xs[0])
	case "floor":
		return math.Floor(xs[0])
	case "ceil":
		return math.Ceil(xs[0])
	case "exp":
		return math.Exp(xs[0])
	case "sqrt":
		return math.Sqrt(xs[0])
	}
	return math.Log(xs[0])
}

// formulaFuncs are the functions a formula may call, with their least and
// most argument counts (0: no bound).
var formulaFuncs = map[string][2]int{
	"min": {1, 0}, "max": {1, 0},
	"abs": {1, 1}, "floor": {1, 1}, "ceil": {1, 1}, "exp": {1, 1}, "sqrt": {1, 1}, "log": {1, 1},
}

// ParseFormula parses text, whose names must each be one of names.
func ParseFormula(text string, names []string) (*Formula, error) {
	p := &formulaParser{src: text, names: names}
	p.next()
	root, err := p.expr()
	if err != nil {
		return nil, err
	}
	if p.tok != "" {
		return nil, fmt.Errorf("unexpected %q at column %d", p.tok, p.at+1)
	}
	return &Formula{text: text, root: root}, nil
}

// Eval computes the formula over the sub-graders' scores; a result that is
// not a finite number (a division by zero, log of 0) is an error.
func (f *Formula) Eval(vals map[string]float64) (float64, error) {
	out := f.root.eval(vals)
	if math.IsNaN(out) || math.IsInf(out, 0) {
		return 0, fmt.Errorf("calculate_output %q gives %v for scores %v", f.text, out, vals)
	}
	return out, nil
}

func (f *Formula) String() string { return f.text }

type formulaParser struct {
	src     string
	pos, at int
	tok     string
	names   []string
}

// next reads the next token: a number, a name, or one punctuation character.
func (p *formulaParser) next() {
	for p.pos < len(p.src) && unicode.IsSpace(rune(p.src[p.pos])) {
		p.pos++
	}
	p.at = p.pos
	if p.pos >= len(p.src) {
		p.tok = ""
		return
	}
	c := p.src[p.pos]
	start := p.pos
	switch {
	case c >= '0' && c <= '9' || c == '.':
		for p.pos < len(p.src) && (p.src[p.pos] >= '0' && p.src[p.pos] <= '9' || p.src[p.pos] == '.') {
			p.pos++
		}
	case c == '_' || unicode.IsLetter(rune(c)):
		for p.pos < len(p.src) && (p.src[p.pos] == '_' || unicode.IsLetter(rune(p.src[p.pos])) || unicode.IsDigit(rune(p.src[p.pos]))) {
			p.pos++
		}
	default:
		p.pos++
	}
	p.tok = p.src[start:p.pos]
}

func (p *formulaParser) expr() (formulaNode, error) {
	l, err := p.term()
	for err == nil && (p.tok == "+" || p.tok == "-") {
		op := p.tok[0]
		p.next()
		var r formulaNode
		if r, err = p.term(); err == nil {
			l = binNode{op, l, r}
		}
	}
	return l, err
}

func (p *formulaParser) term() (formulaNode, error) {
	l, err := p.unary()
	for err == nil && (p.tok == "*" || p.tok == "/") {
		op := p.tok[0]
		p.next()
		var r formulaNode
		if r, err = p.unary(); err == nil {
			l = binNode{op, l, r}
		}
	}
	return l, err
}

func (p *formulaParser) unary() (formulaNode, error) {
	switch p.tok {
	case "-":
		p.next()
		x, err := p.unary()
		return negNode{x}, err
	case "+":
		p.next()
		return p.unary()
	}
	return p.primary()
}

func (p *formulaParser) primary() (formulaNode, error) {
	tok, at := p.tok, p.at
	switch {
	case tok == "":
		return nil, fmt.Errorf("ends where a number, a sub-grader name or ( was expected")
	case tok == "(":
		p.next()
		x, err := p.expr()
		if err != nil {
			return nil, err
		}
		if p.tok != ")" {
			return nil, fmt.Errorf("missing ) at column %d", p.at+1)
		}
		p.next()
		return x, nil
	case tok[0] >= '0' && tok[0] <= '9' || tok[0] == '.':
		f, err := strconv.ParseFloat(tok, 64)
		if err != nil {
			return nil, fmt.Errorf("%q at column %d is not a number", tok, at+1)
		}
		p.next()
		return numNode(f), nil
	case tok[0] == '_' || unicode.IsLetter(rune(tok[0])):
		p.next()
		if p.tok == "(" {
			return p.call(tok, at)
		}
		for _, n := range p.names {
			if n == tok {
				return nameNode(tok), nil
			}
		}
		return nil, fmt.Errorf("%q at column %d is not a sub-grader (graders: %s)", tok, at+1, strings.Join(p.names, ", "))
	}
	return nil, fmt.Errorf("unexpected %q at column %d (a formula has numbers, sub-grader names, + - * / and parentheses)", tok, at+1)
}

func (p *formulaParser) call(fn string, at int) (formulaNode, error) {
	arity, ok := formulaFuncs[fn]
	if !ok {
		return nil, fmt.Errorf("%s at column %d is not a function a formula can call (min, max, abs, floor, ceil, exp, sqrt, log)", fn, at+1)
	}
	p.next() // (
	var args []formulaNode
	for {
		x, err := p.expr()
		if err != nil {
			return nil, err
		}
		args = append(args, x)
		if p.tok == "," {
			p.next()
			continue
		}
		if p.tok != ")" {
			return nil, fmt.Errorf("missing ) after the arguments of %s at column %d", fn, at+1)
		}
		p.next()
		break
	}
	if len(args) < arity[0] || (arity[1] > 0 && len(args) > arity[1]) {
		return nil, fmt.Errorf("%s at column %d takes %s, got %d", fn, at+1, map[bool]string{true: "one argument", false: "one or more arguments"}[arity[1] == 1], len(args))
	}
	return callNode{fn, args}, nil
}
