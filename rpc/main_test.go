package rpc_test

import (
	"bufio"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/ohmypi/retryfsm/internal/testkit"
)

// retrysimBin is the retrysim program TestMain found.
var retrysimBin string

// fakeServerArg, then a mode, as the argument after "rpc" (rpc.Start(ctx,
// os.Args[0], fakeServerArg+mode)) makes the test binary act as a
// misbehaving server (see fakeServer) instead of running the tests; an
// argument rather than a variable of the environment, so that the tests
// starting one can run in parallel.
const fakeServerArg = "-rpc-test-fake-server="

func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == "rpc" && strings.HasPrefix(os.Args[2], fakeServerArg) {
		os.Exit(fakeServer(strings.TrimPrefix(os.Args[2], fakeServerArg)))
	}
	goleak.VerifyTestMain(withBinary{m})
}

// withBinary finds retrysim (linked once, then kept by the go command's
// build cache: internal/testkit.Program) around the tests.
type withBinary struct{ m *testing.M }

func (w withBinary) Run() int {
	bin, err := testkit.Program("..", "./cmd/retrysim") // from the module root
	if err != nil {
		fmt.Fprintf(os.Stderr, "building retrysim: %v\n", err)
		return 1
	}
	retrysimBin = bin
	return w.m.Run()
}

// fakeServer is a server that does not answer: "silent" writes to stderr,
// says {"type":"ready"} and then reads its input to the end without
// answering; "crash" reads one line and exits with status 3; "deaf" says
// {"type":"ready"} and never reads its input (it waits to be killed).
func fakeServer(mode string) int {
	in := bufio.NewReader(os.Stdin)
	switch mode {
	case "silent":
		fmt.Fprintln(os.Stderr, "fake: starting")
		fmt.Fprintln(os.Stderr, "fake: something went wrong")
		fmt.Println(`{"type":"ready"}`)
		for {
			if _, err := in.ReadString('\n'); err != nil {
				return 0
			}
		}
	case "crash":
		_, _ = in.ReadString('\n')
		fmt.Fprintln(os.Stderr, "fake: crashing on purpose")
		return 3
	case "deaf":
		fmt.Println(`{"type":"ready"}`)
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt)
		<-sig
		return 0
	}
	return 2
}
