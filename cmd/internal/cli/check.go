package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ohmypi/retryfsm/explore"
	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/policy/retry"
	"github.com/ohmypi/retryfsm/session"
)

func init() {
	register(&command{
		name:  "check",
		short: "explore every reachable state of a policy variant and check its invariants",
		long: `Explores the session of a policy variant (default: sound) breadth-first:
the session core is stepped by every enabled input in every reachable
state, on an abstract timer queue, and the invariants of SPEC.md §12.3 are
checked at every step and at quiescence.
maxRetries is fixed per exploration, within the range measured to explore
in under 10 s and 1 GB on 2 cores (with --max-retries-upto N, for 0..N
together): ` + maxRetriesRanges() + `.

--profile NAME explores that profile's retry settings (SPEC.md §12.6: a
jitter range at its two ends, persistent mode's counter
saturated, hinted replies when the profile reads hints). Its maxRetries is
the profile's own unless --max-retries or --max-retries-upto is given.
Variant original takes only the default profile (` + policy.DefaultProfile + `).

Stdout is a valid scenario file: comments first (the variant, the
profile and the maxRetries range checked, each invariant checked with its
meaning, then "# states=N transitions=M violations=K", K the violated
invariants), then the first violated invariant's shortest counterexample
as a scenario file after "# violation: NAME", whose expect block passes
under "retrysim run": it shows the violation. The other violations follow
as comments with their paths; --out DIR writes every counterexample as
check-VARIANT-NAME.yaml (check-VARIANT-PROFILE-NAME.yaml with --profile)
and lists the files as comments. A counterexample of jittered settings is
a comment with its path (its scenario cannot fix the jitter draws).

Exit status: 0 when every invariant holds, 1 on a violation, 2 on invalid
flags.`,
		options: func(fs *flag.FlagSet) runner {
			o := &checkOptions{fs: fs}
			fs.StringVar(&o.variant, "variant", "", "check the policy variant `NAME` (one of: "+strings.Join(session.VariantNames(), ", ")+"; default sound)")
			profileFlag(fs, &o.profile, "explore the retry settings of profile `NAME` instead of the default ones")
			fs.IntVar(&o.maxRetries, "max-retries", policy.DefaultMaxRetries, "explore with settings.maxRetries `N` ("+maxRetriesRanges()+"; default 3, or the profile's)")
			intVar(fs, &o.maxRetriesUpto, "max-retries-upto", "explore every maxRetries from 0 to `N` (same range; not with --max-retries; default: off)")
			fs.StringVar(&o.out, "out", "", "write the counterexamples into `DIR` instead of printing them")
			return o
		},
	})
}

// checkOptions are check's flags.
type checkOptions struct {
	fs                         *flag.FlagSet // which flags were given
	variant, profile           string
	maxRetries, maxRetriesUpto int
	out                        string
}

func (o *checkOptions) run(args []string, stdout, stderr io.Writer) int {
	out := &firstErrWriter{w: stdout}
	return reportOutputErr(out, stderr, o.runTo(args, out, stderr))
}

// runTo is check printing to stdout, whose write errors run reports.
func (o *checkOptions) runTo(args []string, stdout, stderr io.Writer) int {
	c := lookup("check")
	if len(args) != 0 {
		return usageError(c, stderr, "unexpected arguments: %s", strings.Join(args, " "))
	}
	name, ok := checkVariant(c, o.variant, stderr)
	if !ok {
		return exitUsage
	}
	v, err := session.VariantByName(name)
	if err != nil {
		return usageError(c, stderr, "--variant: %v", err)
	}
	var set *policy.Settings // nil: the default settings
	profile := o.profile
	if profile != "" {
		_, prof, err := retry.Resolve(v.Name, profile)
		var pair *retry.PairError
		switch {
		case errors.As(err, &pair):
			return usageError(c, stderr, "--profile %s: %v", pair.Profile, err)
		case err != nil:
			return usageError(c, stderr, "--profile: %v", err)
		}
		profile, set = prof.Name, &prof.Settings
	}
	given := givenFlags(o.fs)
	flagName, n := "max-retries", o.maxRetries
	if given["max-retries-upto"] {
		if given[flagName] {
			return usageError(c, stderr, "--max-retries and --max-retries-upto: give one, not both")
		}
		flagName, n = "max-retries-upto", o.maxRetriesUpto
	}
	if set != nil && !given[flagName] { // the profile's own maxRetries
		n = set.MaxRetries
	}
	from, to := n, n
	if flagName == "max-retries-upto" {
		from = 0
	}
	var rangeErr *explore.MaxRetriesError
	if errors.As(explore.ValidateMaxRetries(v, n), &rangeErr) {
		return usageError(c, stderr, "--%s %d is out of range for variant %s (allowed: 0 to %d, the range explored in under 10 s and 1 GB; see SPEC.md §12)",
			flagName, n, v.Name, rangeErr.Limit)
	}
	for mr := from; mr <= to; mr++ {
		if err := explore.ValidateSettings(v, set, mr); err != nil {
			return usageError(c, stderr, "--profile %s with maxRetries %d: %v (see SPEC.md §12.6)", profile, mr, err)
		}
	}
	sum, err := explore.CheckSettings(v, set, from, to)
	if err != nil {
		fmt.Fprintf(stderr, "retrysim check: %v\n", err)
		return exitFail
	}
	return o.report(stdout, stderr, v.Name, profile, from, to, sum)
}

// report prints check's summary and counterexamples (under --out, their
// files) and gives the exit status.
func (o *checkOptions) report(stdout, stderr io.Writer, variant, profile string, from, to int, sum *explore.Summary) int {
	// Everything but the first counterexample is a YAML comment, so that
	// stdout is a valid scenario file whenever there is a violation.
	what := "variant " + variant
	if profile != "" {
		what += ", profile " + profile
	}
	if from == to {
		what += fmt.Sprintf(", maxRetries %d", from)
	} else {
		what += fmt.Sprintf(", maxRetries %d to %d", from, to)
	}
	fmt.Fprintf(stdout, "# retrysim check: %s\n# invariants checked (SPEC.md §12.3):\n", what)
	for _, inv := range explore.Invariants() {
		fmt.Fprintf(stdout, "#   %s: %s\n", inv, inv.Description())
	}
	fmt.Fprintf(stdout, "# %s\n", sum.Line())
	out := o.out
	if out != "" {
		if err := os.MkdirAll(out, 0o755); err != nil {
			fmt.Fprintf(stderr, "retrysim check: %v\n", err)
			return exitUsage
		}
	}
	printed := false
	for _, cx := range sum.Counterexamples {
		if cx.Replay == nil { // jittered settings: the path alone
			fmt.Fprintf(stdout, "# violation: %s (maxRetries %d): path %v (not replayed: %s)\n", cx.Invariant, cx.MaxRetries, cx.Path, cx.NotReplayed)
			continue
		}
		if out == "" {
			if printed {
				fmt.Fprintf(stdout, "# violation: %s (maxRetries %d): path %v (--out DIR writes its scenario file)\n", cx.Invariant, cx.MaxRetries, cx.Path)
				continue
			}
			printed = true
			fmt.Fprintf(stdout, "# violation: %s\n", cx.Invariant)
			stdout.Write(cx.Replay.YAML)
			continue
		}
		base := variant
		if profile != "" {
			base += "-" + profile
		}
		path := filepath.Join(out, fmt.Sprintf("check-%s-%s.yaml", base, cx.Invariant))
		if err := os.WriteFile(path, cx.Replay.YAML, 0o644); err != nil {
			fmt.Fprintf(stderr, "retrysim check: %v\n", err)
			return exitFail
		}
		fmt.Fprintf(stdout, "# violation: %s: %s\n", cx.Invariant, path)
	}
	if len(sum.Counterexamples) > 0 {
		return exitFail
	}
	return exitOK
}

// maxRetriesRanges lists the range of maxRetries check accepts per
// variant, e.g. "sound 0 to 20, original 0 to 11".
func maxRetriesRanges() string {
	var parts []string
	for _, name := range session.VariantNames() {
		v, _ := session.VariantByName(name)
		parts = append(parts, fmt.Sprintf("%s 0 to %d", name, explore.MaxRetriesLimit(v)))
	}
	return strings.Join(parts, ", ")
}
