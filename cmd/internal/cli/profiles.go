package cli

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ohmypi/retryfsm/policy"
)

func init() {
	register(&command{
		name:  "profiles",
		short: "list the named retry profiles (other agents' and SDKs' policies) and their parameters",
		long: `Prints the named retry profiles, the default (` + policy.DefaultProfile + `) first, as a table
of their parameters:

    NAME        the profile's name (scenario key "profile")
    RETRIES     maxRetries: retries per chain (calls = retries + 1)
    BASE_MS     baseDelayMs: the wait before the first retry
    FACTOR      backoffFactor: retry k waits base * factor^(k-1)
    CAP_MS      maxBackoffMs: the cap on that backoff ("-": none)
    JITTER      jitter mode and ratio ("none", "down 0.25", ...)
    HINTS       retryAfter.use: ignore, floor or replace
    MAXHINT_MS  retryAfter.maxHintMs: a longer hint is not used ("-": no bound)
    MAXWAIT_MS  retryAfter.maxWaitMs: a longer wait ends the chain ("-": none)
    CLASSIFY    classify mode, "+patterns" when the profile has pattern lists
    PERSISTENT  persistent (unattended) mode
    SUMMARY     whose policy it is

With --json, prints a JSON array of {"name", "summary", "source", "settings"},
settings in the keys of the settings JSON (SPEC.md §1), pattern lists included,
and "layer", the profile of the provider layer beneath, for a profile with one.
SPEC.md §14 gives each profile's parameters with their upstream origin.

Exit status: 0 when the list was printed, 2 on invalid flags or arguments.`,
		options: func(fs *flag.FlagSet) runner {
			o := &profilesOptions{}
			fs.BoolVar(&o.json, "json", false, "print the profiles as a JSON array")
			return o
		},
	})
}

// profilesOptions are profiles' flags.
type profilesOptions struct{ json bool }

func (o *profilesOptions) run(args []string, stdout, stderr io.Writer) int {
	c := lookup("profiles")
	if len(args) != 0 {
		return usageError(c, stderr, "takes no arguments, got %q", strings.Join(args, " "))
	}
	var out []byte
	var err error
	if o.json {
		out, err = profilesJSON(policy.Profiles())
	} else {
		out, err = profilesTable(policy.Profiles())
	}
	if err == nil {
		_, err = stdout.Write(out)
	}
	if err != nil {
		fmt.Fprintf(stderr, "retrysim profiles: %v\n", err)
		return exitFail
	}
	return exitOK
}

// profileJSON is one element of "retrysim profiles --json".
type profileJSON struct {
	Name     string          `json:"name"`
	Summary  string          `json:"summary"`
	Source   string          `json:"source"`
	Settings policy.Settings `json:"settings"`
	// Layer is the profile of its provider layer, when it has one.
	Layer string `json:"layer,omitempty"`
}

// profilesJSON writes ps as an indented JSON array.
func profilesJSON(ps []policy.Profile) ([]byte, error) {
	list := make([]profileJSON, len(ps))
	for i, p := range ps {
		list[i] = profileJSON{Name: p.Name, Summary: p.Summary, Source: p.Source, Settings: p.Settings, Layer: p.Layer}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(list); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// profilesTable writes ps as a table aligned by text/tabwriter.
func profilesTable(ps []policy.Profile) ([]byte, error) {
	var b bytes.Buffer
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tRETRIES\tBASE_MS\tFACTOR\tCAP_MS\tJITTER\tHINTS\tMAXHINT_MS\tMAXWAIT_MS\tCLASSIFY\tPERSISTENT\tSUMMARY")
	for _, p := range ps {
		s := p.Settings.Normalized()
		jitter := s.Jitter.Mode
		if s.Jitter.Mode != policy.JitterNone {
			jitter += " " + strconv.FormatFloat(s.Jitter.Ratio, 'f', -1, 64)
		}
		classify := s.Classify
		if len(s.RetryablePatterns)+len(s.NonRetryablePatterns) > 0 {
			classify += "+patterns"
		}
		persistent := "no"
		if s.Persistent {
			persistent = "yes"
		}
		fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			p.Name, s.MaxRetries, msCell(s.BaseDelay, "0"), strconv.FormatFloat(s.BackoffFactor, 'f', -1, 64),
			msCell(s.MaxBackoff, "-"), jitter, s.RetryAfter.Use, msCell(s.RetryAfter.MaxHint, "-"),
			msCell(s.RetryAfter.MaxWait, "-"), classify, persistent, p.Summary)
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// msCell writes d in milliseconds as JavaScript writes the number, zero as
// zero.
func msCell(d time.Duration, zero string) string {
	if d == 0 {
		return zero
	}
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', -1, 64)
}
