package cli

import (
	"flag"
	"fmt"
	"strconv"
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
