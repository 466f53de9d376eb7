package cli

import (
	"flag"
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// ownErrorValue is a flag.Value of this package whose Set error is the
// whole usage message ("--NAME: ..."): runCommand prints it as it is, not
// after the flag package's "invalid value ... for flag -NAME: ".
type ownErrorValue interface {
	flag.Value
	setError() error
}

// setError is the error of the flag of fs whose Set failed, when that
// flag is an ownErrorValue (the flag package stops at the first error, so
// there is one at most); nil otherwise.
func setError(fs *flag.FlagSet) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if v, ok := f.Value.(ownErrorValue); ok && v.setError() != nil {
			err = v.setError()
		}
	})
	return err
}

// intFlag is a decimal integer flag (strconv.Atoi) with no default shown:
// an invalid value is the usage error "--NAME: "V" is not an integer".
type intFlag struct {
	name string
	n    *int
	text string // as given; "" until set
	err  error
}

// intVar defines the intFlag name on fs, bound to n.
func intVar(fs *flag.FlagSet, n *int, name, usage string) {
	fs.Var(&intFlag{name: name, n: n}, name, usage)
}

func (f *intFlag) String() string {
	if f == nil {
		return ""
	}
	return f.text
}

func (f *intFlag) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		f.err = fmt.Errorf("--%s: %q is not an integer", f.name, s)
		return f.err
	}
	*f.n, f.text = n, s
	return nil
}

func (f *intFlag) setError() error { return f.err }

// flagValueError is the flag package's error for a value a typed flag
// cannot parse: "invalid value "x" for flag -sessions: parse error", or
// "invalid boolean value ... for -json: ...".
var flagValueError = regexp.MustCompile(`^invalid (?:boolean )?value (".*") for (?:flag )?-([^:]+): (.*)$`)

// invalidValue rewrites the flag package's error for a value its typed
// flag cannot parse in the CLI's words, saying what the flag takes:
// "--sessions: "x" is not an integer" (with the reason when it is not
// just a parse error: "value out of range"). ok is false for another
// error.
func invalidValue(fs *flag.FlagSet, msg string) (string, bool) {
	m := flagValueError.FindStringSubmatch(msg)
	if m == nil {
		return "", false
	}
	value, name, reason := m[1], m[2], m[3]
	f := fs.Lookup(name)
	if f == nil {
		return "", false
	}
	g, isGetter := f.Value.(flag.Getter)
	if !isGetter {
		return "", false
	}
	var what string
	switch g.Get().(type) {
	case int, int64, uint, uint64:
		what = "an integer"
	case float64:
		what = "a number"
	case time.Duration:
		what = "a duration (such as 500ms, 2s or 1m30s)"
	case bool:
		what = "true or false"
	default:
		return "", false
	}
	msg = fmt.Sprintf("--%s: %s is not %s", name, value, what)
	if reason != "parse error" {
		msg += " (" + reason + ")"
	}
	return msg, true
}

// givenString is a string flag that knows whether it was given (an empty
// value given is not a flag left out).
type givenString struct {
	v     string
	given bool
}

func (s *givenString) String() string {
	if s == nil {
		return ""
	}
	return s.v
}

func (s *givenString) Set(v string) error { s.v, s.given = v, true; return nil }
