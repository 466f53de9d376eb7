package cli

import (
	"context"
	"flag"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/ohmypi/retryfsm/wire"
)

// defaultProxyListen is where "retrysim proxy" listens by default: loopback.
const defaultProxyListen = "127.0.0.1:8787"

// ProxyShutdown bounds how long the proxy waits for requests in flight
// when it is stopped.
const ProxyShutdown = 5 * time.Second

// ProxyServer serves "retrysim proxy" once its command line is checked,
// until ctx is done, and returns the exit code. cmd/retrysim-proxy passes
// the HTTP server of package proxy to Main (WithProxy); retrysim passes
// none, links no HTTP stack, and runs its proxy command by running
// retrysim-proxy (SPEC.md §18.4).
type ProxyServer func(ctx context.Context, run *ProxyRun) int

// WithProxy is the option of Main that links serve in as the proxy
// command's server: the command serves in this program, and no companion
// is looked for.
func WithProxy(serve ProxyServer) Option {
	return func(p *program) { p.proxy = serve }
}

// ProxyRun is one run of "retrysim proxy", its flags parsed and checked,
// for ProxyServer, which reports through it in the CLI's style.
type ProxyRun struct {
	// Script is the SCRIPT argument ("": none).
	Script string
	// Listen, Upstream and MaxBody are --listen, --upstream, --max-body.
	Listen, Upstream string
	MaxBody          int64
	// Log is where the wire log goes: --log's file, or the standard output.
	Log io.Writer
	// Stderr is the command's standard error.
	Stderr io.Writer
	// Ready, when not nil, is called with the address listened on.
	Ready func(addr string)
}

// UsageError reports a usage error of the proxy command (its message,
// then its synopsis) and returns the exit code, 2.
func (r *ProxyRun) UsageError(format string, a ...any) int {
	return usageError(lookup("proxy"), r.Stderr, format, a...)
}

// Errorf reports an error of the proxy command: "retrysim proxy: ...".
func (r *ProxyRun) Errorf(format string, a ...any) { errorf(r.Stderr, format, a...) }

// proxyOptions are the proxy command's flags.
type proxyOptions struct {
	listen, upstream, log string
	maxBody               int64
	server                ProxyServer // the program's (link), nil when not linked
}

// link takes the program's proxy server: the command runs in this
// program when it has one, else in its companion.
func (o *proxyOptions) link(p *program) bool {
	o.server = p.proxy
	return o.server != nil
}

func init() {
	register(&command{
		name:      "proxy",
		args:      "[SCRIPT]",
		companion: &companion{name: proxyCommand, why: "so that retrysim links no HTTP server"},
		short:     "serve the Anthropic and OpenAI APIs from a script, with wire faults, and log each request for audit --wire",
		long: `Serves POST /v1/messages (Anthropic) and /v1/chat/completions and /v1/responses
(OpenAI), JSON and server-sent events, answering each request from SCRIPT: a
scenario file (its turns in order: an error turn is the provider's HTTP error
with its status, headers and message; stop, toolUse and length a valid answer;
aborted a dropped connection), or a proxy script (SPEC.md §18) of the keys
scenario, fleet (a fleet file: its provider, with its capacity, outage windows,
error rates and retry-after hints, answers the requests the turns do not, on
the real clock from the proxy's start), repeat, text and faults: [{request,
kind, delayMs, events, chunk}], kind one of
` + faultKindList() + `.
Without SCRIPT every request gets a canned answer (or, with --upstream, the
real one).

With --upstream URL, success turns, requests after the last turn and other
paths are forwarded to URL unchanged (streaming included); wire faults apply
to the forwarded answers too.

Point a client at it: ANTHROPIC_BASE_URL=http://ADDR, OPENAI_BASE_URL=http://ADDR/v1.
The wire log (one JSON object per request: time, path, the client's retry
headers, the answer, its faults and timing) goes to --log, or the standard
output; "retrysim audit --wire --profile NAME LOG" checks it. SIGINT or
SIGTERM stops it: requests in flight finish (up to 5 s), the log is flushed,
exit status 0.

Exit status: 0 when stopped by a signal, 1 when serving fails, 2 on invalid
flags, script or address.`,
		options: func(fs *flag.FlagSet) runner {
			o := &proxyOptions{}
			fs.StringVar(&o.listen, "listen", defaultProxyListen, "listen on `ADDR` (loopback by default; another address only when given here)")
			fs.StringVar(&o.upstream, "upstream", "", "forward what the script does not fault to the real endpoint at `URL` (e.g. https://api.anthropic.com)")
			fs.StringVar(&o.log, "log", "", "write the wire log to `FILE` (appended; default: the standard output)")
			fs.Int64Var(&o.maxBody, "max-body", wire.DefaultMaxBodyBytes, "answer 413 to a request body over `BYTES`")
			return o
		},
	})
}

// faultKindList is the wire's fault kinds for the help: "a, b or c".
func faultKindList() string {
	var b strings.Builder
	for i, k := range wire.FaultKinds {
		switch {
		case i == 0:
		case i == len(wire.FaultKinds)-1:
			b.WriteString(" or ")
		default:
			b.WriteString(", ")
		}
		b.WriteString(string(k))
	}
	return b.String()
}

func (o *proxyOptions) run(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signalContext(stderr, "retrysim proxy")
	defer stop()
	return o.serve(ctx, args, stdout, stderr, nil)
}

// serve checks the command line and runs the linked server until ctx is done;
// ready, if not nil, is called with the address it listens on.
func (o *proxyOptions) serve(ctx context.Context, args []string, stdout, stderr io.Writer, ready func(addr string)) int {
	c := lookup("proxy")
	if len(args) > 1 {
		return usageError(c, stderr, "one SCRIPT at most, got %d arguments", len(args))
	}
	if o.listen == "" {
		return usageError(c, stderr, "--listen: an empty address (it would listen on every interface, at a random port); give HOST:PORT, e.g. %s", defaultProxyListen)
	}
	if o.maxBody <= 0 {
		return usageError(c, stderr, "--max-body: %q is not a positive number of bytes", strconv.FormatInt(o.maxBody, 10))
	}
	run := &ProxyRun{Listen: o.listen, Upstream: o.upstream, MaxBody: o.maxBody, Log: stdout, Stderr: stderr, Ready: ready}
	if len(args) == 1 {
		run.Script = args[0]
	}
	if o.log != "" {
		f, err := os.OpenFile(o.log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return usageError(c, stderr, "--log: %v", err)
		}
		defer f.Close()
		run.Log = f
	}
	if o.server == nil {
		// runCommand runs the companion instead: not reached.
		errorf(stderr, "%s is not linked into this program", proxyCommand)
		return exitFail
	}
	return o.server(ctx, run)
}
