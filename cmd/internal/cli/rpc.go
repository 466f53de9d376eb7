package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/ohmypi/retryfsm/fleet/fleetspec"
	"github.com/ohmypi/retryfsm/internal/termsafe"
	"github.com/ohmypi/retryfsm/rpc"
	"github.com/ohmypi/retryfsm/scenario"
)

func init() {
	register(&command{
		name:  "rpc",
		short: "speak the original's JSON lines RPC protocol on stdin/stdout over a simulated session",
		long: `Serves the original agent's RPC protocol: commands one JSON object per line
on stdin, handled one at a time, each answered with one response line; the
session's events (agent_start, message_end, agent_end, auto_retry_start,
auto_retry_end, retry_fallback, auto_compaction_start, auto_compaction_end,
prompt_resolved) are written as they happen. Nothing but JSON lines goes to stdout.

` + wrapText("Commands: "+rpc.CommandsHelp()+`. Any command may carry a string "id", echoed in its response (an unknown command or field gets a "did you mean"). message_end carries the original's full assistant message, agent_end the run's messages.`, 76) + `

The original's launch flags are accepted, so that its RpcClient can start
this command in its place: --mode rpc, --provider NAME and --model ID (the
session's provider and model; they replace the scenario's).

The session is the simulated one, its provider scripted by the turns and
settings of --scenario FILE (its actions and initial prompt are ignored;
without --scenario every model call succeeds, with the default settings,
or with those of --profile NAME). It runs on the real clock (a
2 s backoff takes 2 s), or with --virtual on virtual time that moves only on
{"type":"advance","ms":N}, and then every event carries "t".

With --protocol 2 it speaks the newer protocol of oh-my-pi 18.3.4 instead
(SPEC.md §10.1): a ready line first, prompt_result (the prompt's id, status
ok or error) and session_settled in place of prompt_resolved, errorId on
auto_retry_start, completedAt and duration on an assistant message_end.

At the end of the input: with --virtual the session runs to quiescence and
its remaining events are written; on the real clock it is aborted and the
resulting events are written. Then the command exits.

SIGINT, SIGTERM and SIGHUP end the session like the end of the input, but
with an abort in both modes (virtual time does not run on): the resulting
events (auto_retry_end "Retry cancelled", prompt_resolved) are written and
flushed, and the command exits 0. A second signal exits at once with
128+signal (130 for SIGINT).

Exit status: 0 at the end of the input, after a signal, or when stdout is
closed; 1 when the simulation runs away or reading stdin fails; 2 on
invalid flags or an invalid scenario file.`,
		options: func(fs *flag.FlagSet) runner {
			o := &rpcOptions{}
			variantFlag(fs, &o.ov.variant, "run the policy variant `NAME` instead of the scenario's")
			profileFlag(fs, &o.ov.profile, "start from the retry settings of profile `NAME`: the scenario's settings merged over them, or them alone without --scenario")
			fs.StringVar(&o.scenario, "scenario", "", "script the provider with the turns and settings of scenario `FILE`")
			fs.StringVar(&o.settings, "settings", "", "start the session with the retry settings of `FILE` (JSON, as 'retrysim tune --out' writes them), in place of the scenario's")
			fs.BoolVar(&o.virtual, "virtual", false, "run on virtual time, moved by advance commands; events carry \"t\"")
			fs.IntVar(&o.protocol, "protocol", 1, "speak protocol `VERSION`: 1, the original's, or 2, oh-my-pi 18.3.4's (a ready line, prompt_result and session_settled, errorId; SPEC.md §10.1)")
			fs.StringVar(&o.mode, "mode", "rpc", "the original's launch flag: `MODE` must be rpc")
			fs.Var(&o.provider, "provider", "the session's provider `NAME` (the original's launch flag; default: the scenario's provider)")
			fs.Var(&o.model, "model", "the session's model `ID` (the original's launch flag; default: the scenario's modelId)")
			return o
		},
	})
}

// rpcOptions are rpc's flags.
type rpcOptions struct {
	ov       overrides
	scenario string
	settings string
	virtual  bool
	protocol int
	mode     string
	provider givenString
	model    givenString
}

func (o *rpcOptions) run(args []string, stdout, stderr io.Writer) int {
	return o.serve(args, os.Stdin, stdout, stderr)
}

// defaultRPCScenario is the session without --scenario: default settings,
// no scripted turns (every model call ends with "stop").
const defaultRPCScenario = `{"name":"rpc"}`

// rpcScenario is the session's scenario: file path (--scenario), or
// without one the default scenario, ov applied to it; the profile of
// --profile thus gives the session's initial settings. On error it is nil
// and the exit code, the error reported on stderr.
func rpcScenario(path string, ov overrides, stderr io.Writer) (*scenario.Scenario, int) {
	if path != "" {
		sc, ok := loadOne(path, ov, stderr)
		if !ok {
			return nil, exitUsage
		}
		return sc, exitOK
	}
	sc, err := scenario.Parse("", []byte(defaultRPCScenario))
	if err == nil {
		err = ov.apply(sc)
	}
	if err != nil {
		fmt.Fprintf(stderr, "retrysim rpc: %v\n", err)
		return nil, exitFail
	}
	return sc, exitOK
}

// runRPC runs "retrysim rpc" with the flags fs (rpc's) parsed, on stdin.
func runRPC(fs *commandFlags, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return fs.opts.(*rpcOptions).serve(args, stdin, stdout, stderr)
}

// serve runs "retrysim rpc" on stdin.
func (o *rpcOptions) serve(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c := lookup("rpc")
	if len(args) != 0 {
		return usageError(c, stderr, "unexpected arguments: %s (the scenario is given with --scenario FILE)", strings.Join(args, " "))
	}
	if o.mode != "rpc" {
		return usageError(c, stderr, "--mode %s: only --mode rpc is served (this command speaks the original's RPC protocol)", o.mode)
	}
	for _, f := range []struct { // in the flags' name order
		name, what string
		v          *givenString
	}{{"model", "the model's id", &o.model}, {"provider", "the provider's name", &o.provider}} {
		if f.v.given && f.v.v == "" {
			return usageError(c, stderr, "--%s: empty (give %s, or leave the flag out for the scenario's)", f.name, f.what)
		}
	}
	if o.protocol < 1 || o.protocol > 2 {
		return usageError(c, stderr, "--protocol %d: unknown (allowed: 1, the original's, or 2, oh-my-pi 18.3.4's)", o.protocol)
	}
	ov, ok := checkOverrides(c, o.ov, stderr)
	if !ok {
		return exitUsage
	}
	if o.settings != "" && ov.profile != "" {
		return usageError(c, stderr, "--settings and --profile both give the session's settings: give one")
	}
	sc, code := rpcScenario(o.scenario, ov, stderr)
	if sc == nil {
		return code
	}
	if o.settings != "" {
		pol, err := fleetspec.ReadPolicy(o.settings)
		if err != nil {
			return usageError(c, stderr, "--settings: %s", termsafe.Text(err.Error()))
		}
		sc.SetPolicy(pol)
	}
	if o.provider.given {
		sc.Provider = o.provider.v
	}
	if o.model.given {
		sc.ModelID = o.model.v
	}
	if f, isFile := stdout.(*os.File); isFile && f == os.Stdout {
		// A closed stdout must end the server quietly: get EPIPE as an
		// error instead of being killed by SIGPIPE.
		signal.Ignore(syscall.SIGPIPE)
	}
	ctx, stop := signalContext(stderr, "retrysim rpc")
	defer stop()
	err := rpc.Serve(ctx, stdin, stdout, rpc.Options{
		Scenario: sc,
		Variant:  ov.variant,
		Virtual:  o.virtual,
		Log:      prefixWriter{w: stderr, prefix: "retrysim "},
		Protocol: o.protocol,
		EndGrace: rpc.SignalGrace,
	})
	switch {
	case err == nil, errors.Is(err, rpc.ErrOutput), errors.Is(err, context.Canceled):
		return exitOK
	default:
		// Serve's errors start with "rpc: " and are not logged by it.
		fmt.Fprintf(stderr, "retrysim %v\n", err)
		return exitFail
	}
}

// endSignals end a session cleanly; a second one exits at once.
var endSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}

// signalContext returns a context cancelled by the first of endSignals,
// with a note on stderr; a second signal exits the process at once with
// 128+signal. stop releases the signals, after the note is written.
func signalContext(stderr io.Writer, prefix string) (ctx context.Context, stop func()) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, endSignals...)
	ctx, end := endOnSignal(sigs, stderr, prefix, os.Exit)
	return ctx, func() {
		signal.Stop(sigs)
		end()
	}
}

// endOnSignal is signalContext on the signals sigs receives, exiting with
// exit. The context is cancelled before the note is written (a write to
// stderr may wait); stop returns once a note begun is written, so that the
// session's end, which the cancellation starts, cannot end the process
// before its note.
func endOnSignal(sigs <-chan os.Signal, stderr io.Writer, prefix string, exit func(int)) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		first := true
		for {
			select {
			case <-done:
				return
			case sig := <-sigs:
				if !first {
					exit(exitCodeFor(sig))
					continue
				}
				first = false
				cancel() // first: the note is a write that may wait
				fmt.Fprintf(stderr, "%s: %v: ending the session (again to exit at once)\n", prefix, sig)
			}
		}
	}()
	return ctx, func() {
		close(done)
		cancel()
		<-finished
	}
}

// exitCodeFor is the shell's status for a death by sig: 128+its number.
func exitCodeFor(sig os.Signal) int {
	if n, ok := sig.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return exitInterrupted
}

// prefixWriter writes each diagnostic (one Write per line) with a prefix.
type prefixWriter struct {
	w      io.Writer
	prefix string
}

func (p prefixWriter) Write(b []byte) (int, error) {
	if _, err := io.WriteString(p.w, p.prefix+string(b)); err != nil {
		return 0, err
	}
	return len(b), nil
}

// wrapText breaks text into lines of at most width bytes, at spaces, each
// ended by a line feed but the last.
func wrapText(text string, width int) string {
	var b strings.Builder
	n := 0
	for i, w := range strings.Fields(text) {
		switch {
		case i == 0:
		case n+1+len(w) > width:
			b.WriteByte('\n')
			n = 0
		default:
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}
