// Command retrysim-proxy is retrysim with the proxy's HTTP server linked
// in: "retrysim-proxy [flags] [SCRIPT]" is "retrysim proxy [flags]
// [SCRIPT]", which runs this program (SPEC.md §18.4). It serves the
// Anthropic Messages and OpenAI Chat Completions and Responses APIs from a
// script, with wire faults, and writes a wire log for "retrysim audit
// --wire". Apart from retrysim so that retrysim, the first command a
// newcomer builds, links no HTTP stack.
//
//	retrysim-proxy [--listen ADDR] [--upstream URL] [--log FILE] [--max-body BYTES] [SCRIPT]
//	retrysim-proxy proxy [flags] [SCRIPT] (the same: how "retrysim proxy" runs it)
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/ohmypi/retryfsm/cmd/internal/cli"
	"github.com/ohmypi/retryfsm/internal/termsafe"
	"github.com/ohmypi/retryfsm/proxy"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run runs this program's arguments as the CLI's proxy command with the
// HTTP server linked in (serve), and returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	return cli.Main(commandLine(args), stdout, stderr, cli.WithProxy(serve))
}

// commandLine is the retrysim command line of this program's arguments:
// "proxy ARGS", unless they name the command ("retrysim proxy" runs it
// as "retrysim-proxy proxy ARGS").
func commandLine(args []string) []string {
	if len(args) > 0 && args[0] == "proxy" {
		return args
	}
	return append([]string{"proxy"}, args...)
}

// serve serves run's script on run.Listen until ctx is done, then ends
// the faults' waits, lets requests in flight finish (up to
// cli.ProxyShutdown; then their connections are closed), waits until each
// is logged and flushes the wire log.
func serve(ctx context.Context, run *cli.ProxyRun) int {
	script, stopped, err := loadScript(ctx, run)
	switch {
	case stopped:
		run.Errorf("stopped before serving: %s was not read", termsafe.Text(run.Script))
		return 0
	case err != nil:
		run.Errorf("%s", termsafe.Text(err.Error()))
		return 2
	}
	// a log that cannot be written is said at once and stops the proxy;
	// a closed pipe is an error to say (EPIPE), not a death by SIGPIPE
	signal.Ignore(syscall.SIGPIPE)
	logFailed := make(chan error, 1)
	p, err := proxy.New(proxy.Options{Script: script, Upstream: run.Upstream, Log: run.Log, MaxBodyBytes: run.MaxBody,
		LogFailed: func(err error) { logFailed <- err }})
	if err != nil {
		return run.UsageError("%v", err)
	}
	ln, err := net.Listen("tcp", run.Listen)
	if err != nil {
		return run.UsageError("--listen: %v", err)
	}
	if proxy.ForwardsToItself(run.Upstream, ln.Addr()) {
		_ = ln.Close()
		return run.UsageError("--upstream: %s is this proxy's own address (--listen %s): every request would come back to it", run.Upstream, run.Listen)
	}
	addr := ln.Addr().String()
	fmt.Fprintf(run.Stderr, "retrysim proxy: listening on http://%s (ANTHROPIC_BASE_URL=http://%s OPENAI_BASE_URL=http://%s/v1)\n", addr, addr, addr)
	srv := p.Server()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(p.Limit(ln)) }()
	if run.Ready != nil {
		run.Ready(addr)
	}
	code := 0
	select {
	case <-ctx.Done():
		shutdown(p, srv, served)
	case err := <-logFailed:
		run.Errorf("writing the wire log: %v; stopping", err)
		shutdown(p, srv, served)
		code = 1
	case err := <-served:
		if !errors.Is(err, http.ErrServerClosed) {
			run.Errorf("serving: %v", err)
			code = 1
		}
	}
	if err := p.Close(); err != nil && code == 0 {
		run.Errorf("writing the wire log: %v", err)
		code = 1
	}
	fmt.Fprintf(run.Stderr, "retrysim proxy: %d requests served\n", p.Requests())
	return code
}

// shutdown stops srv serving p: the faults' waits end at once, requests
// in flight finish (up to cli.ProxyShutdown, then their connections
// close), and served has answered.
func shutdown(p *proxy.Proxy, srv *http.Server, served <-chan error) {
	p.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), cli.ProxyShutdown)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		_ = srv.Close()
	}
	<-served
}

// loadScript reads run's script (none: the empty script) until ctx is
// done: a named pipe waits for its writer (said at once), and a signal
// ends the wait (stopped).
func loadScript(ctx context.Context, run *cli.ProxyRun) (s proxy.Script, stopped bool, err error) {
	if run.Script == "" {
		return proxy.Script{}, false, nil
	}
	if fi, err := os.Stat(run.Script); err == nil && fi.Mode()&os.ModeNamedPipe != 0 {
		run.Errorf("reading %s, a named pipe: waiting for its writer", termsafe.Text(run.Script))
	}
	type loaded struct {
		s   proxy.Script
		err error
	}
	done := make(chan loaded, 1) // the reader may outlive a stop: it ends with the process
	go func() {
		s, err := proxy.LoadScript(run.Script)
		done <- loaded{s, err}
	}()
	select {
	case l := <-done:
		return l.s, false, l.err
	case <-ctx.Done():
		return proxy.Script{}, true, nil
	}
}
