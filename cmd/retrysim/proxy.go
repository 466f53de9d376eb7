package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/ohmypi/retryfsm/internal/termsafe"
	"github.com/ohmypi/retryfsm/proxy"
)

// defaultProxyListen is where "retrysim proxy" listens by default: loopback.
const defaultProxyListen = "127.0.0.1:8787"

// proxyShutdown bounds how long the proxy waits for requests in flight
// when it is stopped.
const proxyShutdown = 5 * time.Second

func init() {
	register(&command{
		name:  "proxy",
		args:  "[SCRIPT]",
		short: "serve the Anthropic and OpenAI APIs from a script, with wire faults, and log each request for audit --wire",
		long: `Serves POST /v1/messages (Anthropic) and /v1/chat/completions and /v1/responses
(OpenAI), JSON and server-sent events, answering each request from SCRIPT: a
scenario file (its turns in order: an error turn is the provider's HTTP error
with its status, headers and message; stop, toolUse and length a valid answer;
aborted a dropped connection), or a proxy script (SPEC.md §18) of the keys
scenario, fleet (a fleet file: its provider, with its capacity, outage windows,
error rates and retry-after hints, answers the requests the turns do not, on
the real clock from the proxy's start), repeat, text and faults: [{request,
kind, delayMs, events, chunk}], kind latency, slow-body, stream-cut, sse-error
or drop. Without SCRIPT every
request gets a canned answer (or, with --upstream, the real one).

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
		flags: func(fs *flag.FlagSet) {
			fs.String("listen", defaultProxyListen, "listen on `ADDR` (loopback by default; another address only when given here)")
			fs.String("upstream", "", "forward what the script does not fault to the real endpoint at `URL` (e.g. https://api.anthropic.com)")
			fs.String("log", "", "write the wire log to `FILE` (appended; default: the standard output)")
			fs.Int64("max-body", proxy.DefaultMaxBodyBytes, "answer 413 to a request body over `BYTES`")
		},
		run: func(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) int {
			ctx, stop := signalContext(stderr, "retrysim proxy")
			defer stop()
			return runProxy(ctx, fs, args, stdout, stderr, nil)
		},
	})
}

// runProxy runs "retrysim proxy" until ctx is done; ready, if not nil, is
// called with the address it listens on.
func runProxy(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer, ready func(addr string)) int {
	c := lookup("proxy")
	if len(args) > 1 {
		return usageError(c, stderr, "one SCRIPT at most, got %d arguments", len(args))
	}
	var script proxy.Script
	if len(args) == 1 {
		s, err := proxy.LoadScript(args[0])
		if err != nil {
			errorf(stderr, "%s", termsafe.Text(err.Error()))
			return exitUsage
		}
		script = s
	}
	maxBody, err := strconv.ParseInt(flagString(fs, "max-body"), 10, 64)
	if err != nil || maxBody <= 0 {
		return usageError(c, stderr, "--max-body: %q is not a positive number of bytes", flagString(fs, "max-body"))
	}
	logw := io.Writer(stdout)
	if path := flagString(fs, "log"); path != "" {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return usageError(c, stderr, "--log: %v", err)
		}
		defer f.Close()
		logw = f
	}
	p, err := proxy.New(proxy.Options{Script: script, Upstream: flagString(fs, "upstream"), Log: logw, MaxBodyBytes: maxBody})
	if err != nil {
		return usageError(c, stderr, "%v", err)
	}
	ln, err := net.Listen("tcp", flagString(fs, "listen"))
	if err != nil {
		return usageError(c, stderr, "--listen: %v", err)
	}
	addr := ln.Addr().String()
	fmt.Fprintf(stderr, "retrysim proxy: listening on http://%s (ANTHROPIC_BASE_URL=http://%s OPENAI_BASE_URL=http://%s/v1)\n", addr, addr, addr)
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if ready != nil {
		ready(addr)
	}
	code := exitOK
	select {
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), proxyShutdown)
		if err := srv.Shutdown(sctx); err != nil {
			_ = srv.Close()
		}
		cancel()
		<-served
	case err := <-served:
		if !errors.Is(err, http.ErrServerClosed) {
			errorf(stderr, "serving: %v", err)
			code = exitFail
		}
	}
	if err := p.Close(); err != nil {
		errorf(stderr, "writing the wire log: %v", err)
		code = exitFail
	}
	fmt.Fprintf(stderr, "retrysim proxy: %d requests served\n", p.Requests())
	return code
}
