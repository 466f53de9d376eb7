package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/ohmypi/retryfsm/internal/suggest"
	"github.com/ohmypi/retryfsm/policy/retry"
	"github.com/ohmypi/retryfsm/scenario"
	"github.com/ohmypi/retryfsm/session"
)

// Exit codes.
const (
	exitOK    = 0 // everything passed / was printed
	exitFail  = 1 // a scenario failed
	exitUsage = 2 // invalid flags, arguments or input files
)

// command is one subcommand. Files of this package add theirs with
// register from an init function.
type command struct {
	name  string // as typed after "retrysim"
	args  string // the synopsis after the flags, e.g. "PATH..."
	short string // one line for "retrysim --help"
	long  string // the paragraph(s) of "retrysim NAME --help"
	// options defines the command's flags on fs, each bound to a field of
	// a new value of the command's options (adding a flag is one line
	// there, its value typed: the flag package, or a flag.Value of this
	// package, parses it), and returns that value, which runs the command
	// once fs has parsed the command line (noFlags: a command without).
	options func(fs *flag.FlagSet) runner

	// companion, when not nil, is the program that runs this command when
	// it is not linked into this one (retrysim proxy: retrysim-proxy):
	// runCommand checks the flags, then runs it with the same arguments.
	companion *companion
}

// runner is a command's options with its flags parsed into them: run runs
// the command with its positional arguments and returns the exit code.
type runner interface {
	run(args []string, stdout, stderr io.Writer) int
}

// runFunc is the runner of a command without flags.
type runFunc func(args []string, stdout, stderr io.Writer) int

func (f runFunc) run(args []string, stdout, stderr io.Writer) int { return f(args, stdout, stderr) }

// noFlags is the options of a command that has no flags: run alone.
func noFlags(run runFunc) func(*flag.FlagSet) runner {
	return func(*flag.FlagSet) runner { return run }
}

var commands []*command

// register adds c to the command table.
func register(c *command) {
	if lookup(c.name) != nil {
		panic("retrysim: command registered twice: " + c.name)
	}
	commands = append(commands, c)
	slices.SortFunc(commands, func(a, b *command) int { return strings.Compare(a.name, b.name) })
}

func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// Main runs the retrysim command line args (without the program name),
// writing to stdout and stderr, and returns the exit code. The options
// say what the program links beyond the CLI (WithProxy); retrysim gives
// none.
func Main(args []string, stdout, stderr io.Writer, opts ...Option) int {
	var p program
	for _, o := range opts {
		o(&p)
	}
	return p.main(args, stdout, stderr)
}

// Option is an option of Main.
type Option func(*program)

// program is what a program running the CLI links beyond it (Main's
// options): the commands that have a companion run in the program when
// it links them.
type program struct {
	proxy ProxyServer // the proxy command's server (WithProxy)
}

// realMain runs the command line args (without the program name) in a
// program that links nothing more, and returns the exit code.
func realMain(args []string, stdout, stderr io.Writer) int {
	return (&program{}).main(args, stdout, stderr)
}

// main runs the command line args (without the program name) and
// returns the exit code.
func (p *program) main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printTopUsage(stderr)
		return exitUsage
	}
	switch name := args[0]; name {
	case "-h", "-help", "--help":
		printTopUsage(stdout)
		return exitOK
	case "-version", "--version":
		return p.runCommand(lookup("version"), args[1:], stdout, stderr)
	default:
		if strings.HasPrefix(name, "-") {
			flagName, _, _ := strings.Cut(strings.TrimLeft(name, "-"), "=")
			fmt.Fprintf(stderr, "retrysim: unknown flag %s (flags go after the command)%s\n", name,
				suggest.DidYouMean(flagName, []string{"help", "version"}, "--"))
			fmt.Fprintln(stderr, "Run 'retrysim --help' for the commands.")
			return exitUsage
		}
		c := lookup(name)
		if c == nil {
			fmt.Fprintln(stderr, unknownCommand("retrysim", name))
			fmt.Fprintln(stderr, "Run 'retrysim --help' for the commands.")
			return exitUsage
		}
		return p.runCommand(c, args[1:], stdout, stderr)
	}
}

// unknownCommand is the error for a command name that is not one: with
// the closest names when there are close ones, else with every name.
func unknownCommand(prefix, name string) string {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	if hint := suggest.DidYouMean(name, names, ""); hint != "" {
		return fmt.Sprintf("%s: unknown command %q%s", prefix, name, hint)
	}
	return fmt.Sprintf("%s: unknown command %q (commands: %s)", prefix, name, commandNames())
}

// commandOutput is the stderr runCommand hands a command: it knows the
// command's name, so that what commands share (loadOne, errorf) reports
// errors with the command's prefix, "retrysim NAME: ".
type commandOutput struct {
	io.Writer
	name string
}

// Unwrap is the writer underneath (a terminal check needs the *os.File).
func (o commandOutput) Unwrap() io.Writer { return o.Writer }

// outputFile is the *os.File under w (through commandOutput), or nil.
func outputFile(w io.Writer) *os.File {
	for {
		switch v := w.(type) {
		case *os.File:
			return v
		case interface{ Unwrap() io.Writer }:
			w = v.Unwrap()
		default:
			return nil
		}
	}
}

// errorf reports an error on stderr in the one style of the CLI's errors:
// "retrysim NAME: ...", NAME the command's when stderr is the one
// runCommand handed it ("retrysim: ..." otherwise).
func errorf(stderr io.Writer, format string, a ...any) {
	prefix := "retrysim"
	if o, ok := stderr.(commandOutput); ok {
		prefix += " " + o.name
	}
	fmt.Fprintf(stderr, "%s: %s\n", prefix, fmt.Sprintf(format, a...))
}

// firstErrWriter is a command's stdout that remembers its first write
// error (a full disk, a closed pipe), for commands that print as they go:
// later writes fail at once with it.
type firstErrWriter struct {
	w   io.Writer
	err error
}

func (f *firstErrWriter) Write(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	n, err := f.w.Write(p)
	if err != nil {
		f.err = err
	}
	return n, err
}

// Unwrap is the writer underneath.
func (f *firstErrWriter) Unwrap() io.Writer { return f.w }

// reportOutputErr reports out's write error, if any, and returns the exit
// status: at least exitFail after a write error, else code.
func reportOutputErr(out *firstErrWriter, stderr io.Writer, code int) int {
	if out.err == nil {
		return code
	}
	errorf(stderr, "writing the output: %v", out.err)
	return max(code, exitFail)
}

func commandNames() string {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	return strings.Join(names, ", ")
}

func printTopUsage(w io.Writer) {
	fmt.Fprintln(w, "retrysim runs retry-policy scenarios in a deterministic simulator.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: retrysim COMMAND [flags] [args]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	width := 0
	for _, c := range commands {
		width = max(width, len(c.name))
	}
	for _, c := range commands {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.name, c.short)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'retrysim COMMAND --help' for a command's flags, 'retrysim --version' for the version.")
	fmt.Fprintln(w, "Exit codes: 0 ok, 1 a scenario or invariant failed or a simulation did not finish, 2 invalid input or usage.")
}

// commandFlags is a command's flag set and the options its flags are
// bound to: once the flag set has parsed the command line, opts runs the
// command.
type commandFlags struct {
	*flag.FlagSet
	opts runner
}

// newFlagSet returns c's flag set, bound to a new value of its options,
// reporting errors itself (not printing usage on its own).
func newFlagSet(c *command, stderr io.Writer) *commandFlags {
	fs := &commandFlags{FlagSet: flag.NewFlagSet("retrysim "+c.name, flag.ContinueOnError)}
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	fs.opts = c.options(fs.FlagSet)
	return fs
}

// givenFlags is the set of the names of the flags the command line gave
// (not those left at their defaults).
func givenFlags(fs *flag.FlagSet) map[string]bool {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	return given
}

func synopsis(c *command, fs *commandFlags) string {
	s := "retrysim " + c.name
	hasFlags := false
	fs.VisitAll(func(*flag.Flag) { hasFlags = true })
	if hasFlags {
		s += " [flags]"
	}
	if c.args != "" {
		s += " " + c.args
	}
	return s
}

// printUsage writes c's help: synopsis, description and flags.
func printUsage(c *command, w io.Writer) {
	fs := newFlagSet(c, w)
	fmt.Fprintf(w, "Usage: %s\n\n", synopsis(c, fs))
	if c.long != "" {
		fmt.Fprintln(w, strings.TrimSpace(c.long))
	} else {
		fmt.Fprintln(w, c.short)
	}
	hasFlags := false
	fs.VisitAll(func(*flag.Flag) { hasFlags = true })
	if hasFlags {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Flags:")
		printFlags(fs.FlagSet, w)
	}
}

// printFlags lists fs's flags GNU-style ("--name VALUE"), as they are
// usually typed (the flag package accepts one or two dashes).
func printFlags(fs *flag.FlagSet, w io.Writer) {
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if name != "" {
			line += " " + strings.ToUpper(name)
		}
		if f.Name == "h" || f.Name == "help" {
			return
		}
		fmt.Fprintf(w, "%s\n      %s", line, usage)
		if f.DefValue != "" && !isBoolFlag(f) {
			fmt.Fprintf(w, " (default %q)", f.DefValue)
		}
		fmt.Fprintln(w)
	})
	fmt.Fprintln(w, "  -h, --help\n      show this help")
}

// usageError reports a usage problem of c on stderr and returns exitUsage.
func usageError(c *command, stderr io.Writer, format string, a ...any) int {
	fmt.Fprintf(stderr, "retrysim %s: %s\n", c.name, fmt.Sprintf(format, a...))
	fs := newFlagSet(c, stderr)
	fmt.Fprintf(stderr, "Usage: %s\nRun 'retrysim %s --help' for details.\n", synopsis(c, fs), c.name)
	return exitUsage
}

// runCommand parses c's flags, which may come before, between or after
// the positional arguments ("--" ends the flags), and runs it, its errors
// prefixed "retrysim NAME: " (an unknown flag with the closest ones).
func (p *program) runCommand(c *command, args []string, stdout, stderr io.Writer) int {
	stderr = commandOutput{Writer: stderr, name: c.name}
	fs := newFlagSet(c, stderr)
	fs.SetOutput(io.Discard) // its errors are reported below
	pos, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		printUsage(c, stdout)
		return exitOK
	}
	if err != nil {
		msg := err.Error()
		if ownErr := setError(fs.FlagSet); ownErr != nil {
			msg = ownErr.Error() // the flag's own message, not after "invalid value ..."
		} else if m, ok := invalidValue(fs.FlagSet, msg); ok {
			msg = m
		}
		if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
			names := []string{"help"}
			fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
			msg += suggest.DidYouMean(name, names, "--")
		}
		errorf(stderr, "%s", msg)
		fs := newFlagSet(c, stderr)
		fmt.Fprintf(stderr, "Usage: %s\nRun 'retrysim %s --help' for details.\n", synopsis(c, fs), c.name)
		return exitUsage
	}
	if c.companion != nil {
		if l, ok := fs.opts.(linker); !ok || !l.link(p) {
			return c.companion.run(c, args, stdout, stderr)
		}
	}
	return fs.opts.run(pos, stdout, stderr)
}

// flagParser is what parseInterspersed needs of a flag set: a
// *flag.FlagSet, or a command's *commandFlags.
type flagParser interface {
	Parse(args []string) error
	Args() []string
	Lookup(name string) *flag.Flag
}

// parseInterspersed parses args with fs, collecting the positional
// arguments wherever they are. Everything after a "--" is positional.
func parseInterspersed(fs flagParser, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if stoppedAtDashDash(fs, args, len(args)-len(rest)) {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// stoppedAtDashDash reports whether fs.Parse(args), having consumed the
// first n arguments, stopped at a "--" terminator (rather than at a "--"
// that was the value of a flag).
func stoppedAtDashDash(fs flagParser, args []string, n int) bool {
	if n == 0 || args[n-1] != "--" {
		return false
	}
	if n >= 2 {
		if prev := args[n-2]; strings.HasPrefix(prev, "-") && prev != "--" {
			name := strings.TrimPrefix(strings.TrimPrefix(prev, "-"), "-")
			if f := fs.Lookup(name); f != nil && !isBoolFlag(f) {
				return false // "--" was that flag's value
			}
		}
	}
	return true
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// variantFlag defines --variant on fs, bound to v; what says what it does
// with the variant, e.g. "run the policy variant `NAME` instead of the
// scenario's".
func variantFlag(fs *flag.FlagSet, v *string, what string) {
	fs.StringVar(v, "variant", "", what+" (one of: "+strings.Join(session.VariantNames(), ", ")+")")
}

// profileFlag defines --profile on fs, bound to p; what says what it does
// with the profile, e.g. "merge each scenario's settings over profile
// `NAME`'s".
func profileFlag(fs *flag.FlagSet, p *string, what string) {
	fs.StringVar(p, "profile", "", what+" (one of: "+strings.Join(retry.ProfileNames(), ", ")+")")
}

// overrides are a command's --variant and --profile ("" when not given):
// as the flags set them, then checked (checkOverrides).
type overrides struct{ variant, profile string }

// checkOverrides validates the --variant and --profile of o (a command
// without --profile leaves it ""): an unknown name, or a profile other
// than the default with --variant original, is a usage error (reported;
// false is returned).
func checkOverrides(c *command, o overrides, stderr io.Writer) (overrides, bool) {
	variant, ok := checkVariant(c, o.variant, stderr)
	if !ok {
		return overrides{}, false
	}
	checked := overrides{variant: variant}
	name := o.profile
	if name == "" {
		return checked, true
	}
	_, prof, err := retry.Resolve(variant, name)
	var pair *retry.PairError
	switch {
	case errors.As(err, &pair):
		usageError(c, stderr, "--profile %s: %v", pair.Profile, err)
		return overrides{}, false
	case err != nil:
		usageError(c, stderr, "--profile: %v%s", err, suggest.DidYouMean(name, retry.ProfileNames(), ""))
		return overrides{}, false
	}
	checked.profile = prof.Name
	return checked, true
}

// apply sets o's variant and profile on sc (Scenario.SetVariant and
// SetProfile), in the order that checks the combination they give: an
// error (a *scenario.Error) names the scenario file.
func (o overrides) apply(sc *scenario.Scenario) error {
	if o.variant == "original" { // the profile first: original takes only the default one
		if o.profile != "" {
			if err := sc.SetProfile(o.profile); err != nil {
				return err
			}
		}
		return sc.SetVariant(o.variant)
	}
	if o.variant != "" {
		if err := sc.SetVariant(o.variant); err != nil {
			return err
		}
	}
	if o.profile != "" {
		return sc.SetProfile(o.profile)
	}
	return nil
}

// checkVariant validates the --variant v; it returns an exit code and
// false when the value is unknown.
func checkVariant(c *command, v string, stderr io.Writer) (string, bool) {
	if v == "" {
		return "", true
	}
	if _, err := session.VariantByName(v); err != nil {
		usageError(c, stderr, "--variant: %v%s", err, suggest.DidYouMean(v, session.VariantNames(), ""))
		return "", false
	}
	return v, true
}

// checkFormat validates the --format f against allowed.
func checkFormat(c *command, f string, stderr io.Writer, allowed ...string) (string, bool) {
	if !slices.Contains(allowed, f) {
		usageError(c, stderr, "--format: unknown format %q (allowed: %s)%s", f, strings.Join(allowed, ", "), suggest.DidYouMean(f, allowed, ""))
		return "", false
	}
	return f, true
}

func init() {
	register(&command{
		name:  "help",
		args:  "[COMMAND]",
		short: "show the commands, or one command's flags",
		options: noFlags(func(args []string, stdout, stderr io.Writer) int {
			switch len(args) {
			case 0:
				printTopUsage(stdout)
				return exitOK
			case 1:
				c := lookup(args[0])
				if c == nil {
					fmt.Fprintln(stderr, unknownCommand("retrysim help", args[0]))
					return exitUsage
				}
				printUsage(c, stdout)
				return exitOK
			}
			return usageError(lookup("help"), stderr, "too many arguments")
		}),
	})
}
