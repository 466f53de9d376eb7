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
	"net"
	"net/http"
	"os"

	"github.com/ohmypi/retryfsm/cmd/internal/cli"
	"github.com/ohmypi/retryfsm/internal/termsafe"
	"github.com/ohmypi/retryfsm/proxy"
)

func init() { cli.ProxyServer = serve }

func main() { os.Exit(cli.Main(commandLine(os.Args[1:]), os.Stdout, os.Stderr)) }

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
	var script proxy.Script
	if run.Script != "" {
		s, err := proxy.LoadScript(run.Script)
		if err != nil {
			run.Errorf("%s", termsafe.Text(err.Error()))
			return 2
		}
		script = s
	}
	p, err := proxy.New(proxy.Options{Script: script, Upstream: run.Upstream, Log: run.Log, MaxBodyBytes: run.MaxBody})
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
		p.Stop() // the faults' waits end: their requests end, logged
		sctx, cancel := context.WithTimeout(context.Background(), cli.ProxyShutdown)
		if err := srv.Shutdown(sctx); err != nil {
			_ = srv.Close()
		}
		cancel()
		<-served
	case err := <-served:
		if !errors.Is(err, http.ErrServerClosed) {
			run.Errorf("serving: %v", err)
			code = 1
		}
	}
	if err := p.Close(); err != nil {
		run.Errorf("writing the wire log: %v", err)
		code = 1
	}
	fmt.Fprintf(run.Stderr, "retrysim proxy: %d requests served\n", p.Requests())
	return code
}
