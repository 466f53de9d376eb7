package rpc_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/ohmypi/retryfsm/rpc"
	"github.com/ohmypi/retryfsm/scenario"
)

// oneError: a retryable error, then success; default settings (3 retries,
// 2 s base delay).
const oneError = `
turns:
  - {stopReason: error, errorMessage: "529 overloaded_error"}
  - {stopReason: stop}
`

func parseScenario(t testing.TB, text string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Parse("test.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// serveVirtual runs a --virtual server on input and returns its output
// lines.
func serveVirtual(t *testing.T, scenario, input string) []string {
	t.Helper()
	var out, log bytes.Buffer
	err := rpc.Serve(context.Background(), strings.NewReader(input), &out, rpc.Options{
		Scenario: parseScenario(t, scenario), Virtual: true, Log: &log,
	})
	if err != nil {
		t.Fatalf("Serve: %v (log: %s)", err, log.String())
	}
	if log.Len() > 0 {
		t.Errorf("diagnostics: %s", log.String())
	}
	return splitLines(out.String())
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

func diffLines(t *testing.T, got, want []string) {
	t.Helper()
	n := max(len(got), len(want))
	bad := false
	for i := range n {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			bad = true
			t.Errorf("line %d:\n got: %s\nwant: %s", i+1, g, w)
		}
	}
	if bad {
		t.Logf("whole output:\n%s", strings.Join(got, "\n"))
	}
}

func TestServeVirtualAbortRetryDuringBackoff(t *testing.T) {
	input := `{"id":"p","type":"prompt","message":"hi"}
{"id":"a","type":"advance","ms":500}
{"id":"s1","type":"get_state"}
{"id":"r","type":"abort_retry"}
{"id":"s2","type":"get_state"}
{"type":"advance","ms":5000}
`
	want := []string{
		`{"id":"p","type":"response","command":"prompt","success":true,"data":{"prompt":1}}`,
		`{"t":0,"type":"agent_start"}`,
		msgEnd(vt(0), "error", "529 overloaded_error"),
		agentEnd(vt(0), user(vt(0), "hi"), asst(vt(0), "error", "529 overloaded_error")),
		`{"t":0,"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"529 overloaded_error"}`,
		`{"id":"a","type":"response","command":"advance","success":true,"data":{"t":500}}`,
		`{"id":"s1","type":"response","command":"get_state","success":true,"data":{"isStreaming":true,"messageCount":1,"autoCompactionEnabled":true,"sessionId":"session-1","autoRetryEnabled":true,"isRetrying":true,"retryAttempt":1,"retryState":"backoff","nextRetryAt":2000,"profile":"omp-2026-02","model":{"id":"claude-sonnet-4-5","provider":"anthropic","api":"anthropic-messages"},"thinkingLevel":"off","isCompacting":false,"steeringMode":"one-at-a-time","followUpMode":"one-at-a-time","interruptMode":"immediate","queuedMessageCount":0}}`,
		// The response to abort_retry comes before the auto_retry_end it causes.
		`{"id":"r","type":"response","command":"abort_retry","success":true}`,
		`{"t":500,"type":"auto_retry_end","success":false,"attempt":1,"finalError":"Retry cancelled"}`,
		`{"t":500,"type":"prompt_resolved","prompt":1}`,
		`{"id":"s2","type":"response","command":"get_state","success":true,"data":{"isStreaming":false,"messageCount":1,"autoCompactionEnabled":true,"sessionId":"session-1","autoRetryEnabled":true,"isRetrying":false,"retryAttempt":0,"retryState":"cancelled","nextRetryAt":null,"profile":"omp-2026-02","model":{"id":"claude-sonnet-4-5","provider":"anthropic","api":"anthropic-messages"},"thinkingLevel":"off","isCompacting":false,"steeringMode":"one-at-a-time","followUpMode":"one-at-a-time","interruptMode":"immediate","queuedMessageCount":0}}`,
		`{"type":"response","command":"advance","success":true,"data":{"t":5500}}`,
	}
	diffLines(t, serveVirtual(t, oneError, input), want)
}

func TestServeVirtualAbortDuringBackoff(t *testing.T) {
	input := `{"id":"p","type":"prompt","message":"hi"}
{"type":"advance","ms":1000}
{"id":"x","type":"abort"}
`
	want := []string{
		`{"id":"p","type":"response","command":"prompt","success":true,"data":{"prompt":1}}`,
		`{"t":0,"type":"agent_start"}`,
		msgEnd(vt(0), "error", "529 overloaded_error"),
		agentEnd(vt(0), user(vt(0), "hi"), asst(vt(0), "error", "529 overloaded_error")),
		`{"t":0,"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"529 overloaded_error"}`,
		`{"type":"response","command":"advance","success":true,"data":{"t":1000}}`,
		// The response to abort comes after the auto_retry_end, and the
		// prompt it releases resolves after the response (scenario 07).
		`{"t":1000,"type":"auto_retry_end","success":false,"attempt":1,"finalError":"Retry cancelled"}`,
		`{"id":"x","type":"response","command":"abort","success":true}`,
		`{"t":1000,"type":"prompt_resolved","prompt":1}`,
	}
	diffLines(t, serveVirtual(t, oneError, input), want)
}

func TestServeVirtualChainToSuccessAndQuiescenceAtEOF(t *testing.T) {
	scenario := `
settings: {maxRetries: 3, baseDelayMs: 1000}
turns:
  - {stopReason: error, errorMessage: "529 overloaded_error"}
  - {stopReason: error, errorMessage: "503 service unavailable"}
  - {stopReason: stop, durationMs: 250}
`
	// No advance: the end of the input runs the session to quiescence.
	input := `{"type":"prompt","message":"hi"}`
	want := []string{
		`{"type":"response","command":"prompt","success":true,"data":{"prompt":1}}`,
		`{"t":0,"type":"agent_start"}`,
		msgEnd(vt(0), "error", "529 overloaded_error"),
		agentEnd(vt(0), user(vt(0), "hi"), asst(vt(0), "error", "529 overloaded_error")),
		`{"t":0,"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":1000,"errorMessage":"529 overloaded_error"}`,
		`{"t":1000,"type":"agent_start"}`,
		msgEnd(vt(1000), "error", "503 service unavailable"),
		agentEnd(vt(1000), asst(vt(1000), "error", "503 service unavailable")),
		`{"t":1000,"type":"auto_retry_start","attempt":2,"maxAttempts":3,"delayMs":2000,"errorMessage":"503 service unavailable"}`,
		`{"t":3000,"type":"agent_start"}`,
		msgEnd(vt(3250), "stop", ""),
		`{"t":3250,"type":"auto_retry_end","success":true,"attempt":2}`,
		agentEnd(vt(3250), asst(vt(3250), "stop", "")),
		`{"t":3250,"type":"prompt_resolved","prompt":1}`,
	}
	diffLines(t, serveVirtual(t, scenario, input), want)
}

func TestServeToggleAndRejectedPrompt(t *testing.T) {
	scenario := `
turns:
  - {stopReason: error, errorMessage: "529 overloaded_error"}
  - {stopReason: error, errorMessage: "529 overloaded_error"}
  - {stopReason: stop}
`
	input := `{"id":"off","type":"set_auto_retry","enabled":false}
{"id":"s","type":"get_state"}
{"id":"p1","type":"prompt","message":"one"}
{"id":"on","type":"set_auto_retry","enabled":true}
{"id":"p2","type":"prompt","message":"two"}
{"id":"p3","type":"prompt","message":"three"}
`
	want := []string{
		`{"id":"off","type":"response","command":"set_auto_retry","success":true}`,
		`{"id":"s","type":"response","command":"get_state","success":true,"data":{"isStreaming":false,"messageCount":0,"autoCompactionEnabled":true,"sessionId":"session-1","autoRetryEnabled":false,"isRetrying":false,"retryAttempt":0,"retryState":"idle","nextRetryAt":null,"profile":"omp-2026-02","model":{"id":"claude-sonnet-4-5","provider":"anthropic","api":"anthropic-messages"},"thinkingLevel":"off","isCompacting":false,"steeringMode":"one-at-a-time","followUpMode":"one-at-a-time","interruptMode":"immediate","queuedMessageCount":0}}`,
		`{"id":"p1","type":"response","command":"prompt","success":true,"data":{"prompt":1}}`,
		`{"t":0,"type":"agent_start"}`,
		msgEnd(vt(0), "error", "529 overloaded_error"),
		agentEnd(vt(0), user(vt(0), "one"), asst(vt(0), "error", "529 overloaded_error")),
		`{"t":0,"type":"prompt_resolved","prompt":1}`,
		`{"id":"on","type":"response","command":"set_auto_retry","success":true}`,
		`{"id":"p2","type":"response","command":"prompt","success":true,"data":{"prompt":2}}`,
		`{"t":0,"type":"agent_start"}`,
		msgEnd(vt(0), "error", "529 overloaded_error"),
		agentEnd(vt(0), user(vt(0), "two"), asst(vt(0), "error", "529 overloaded_error")),
		`{"t":0,"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"529 overloaded_error"}`,
		// Busy during the backoff: one error response (the original sends a
		// second, successful one).
		`{"id":"p3","type":"response","command":"prompt","success":false,"error":"Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."}`,
		`{"t":2000,"type":"agent_start"}`,
		msgEnd(vt(2000), "stop", ""),
		`{"t":2000,"type":"auto_retry_end","success":true,"attempt":1}`,
		agentEnd(vt(2000), asst(vt(2000), "stop", "")),
		`{"t":2000,"type":"prompt_resolved","prompt":2}`,
	}
	diffLines(t, serveVirtual(t, scenario, input), want)
}

func TestServeBadInput(t *testing.T) {
	commands := commandList
	tests := []struct {
		name, line, want string
	}{
		{"not JSON", `hello`, `{"type":"response","command":"parse","success":false,"error":"Failed to parse command: invalid JSON: invalid character 'h' looking for beginning of value"}`},
		{"truncated JSON", `{"type":"get_state"`, `{"type":"response","command":"parse","success":false,"error":"Failed to parse command: invalid JSON: unexpected end of JSON input"}`},
		{"array", `[1,2]`, `{"type":"response","command":"parse","success":false,"error":"Failed to parse command: expected a JSON object, got an array"}`},
		{"string", `"get_state"`, `{"type":"response","command":"parse","success":false,"error":"Failed to parse command: expected a JSON object, got string \"get_state\""}`},
		{"number", `42`, `{"type":"response","command":"parse","success":false,"error":"Failed to parse command: expected a JSON object, got number 42"}`},
		{"null", `null`, `{"type":"response","command":"parse","success":false,"error":"Failed to parse command: expected a JSON object, got null"}`},
		{"missing type", `{"id":"a"}`, `{"id":"a","type":"response","command":"parse","success":false,"error":"missing \"type\" (the command: one of ` + commands + `)"}`},
		{"missing type, no id", `{}`, `{"type":"response","command":"parse","success":false,"error":"missing \"type\" (the command: one of ` + commands + `)"}`},
		{"type not a string", `{"id":"a","type":7}`, `{"id":"a","type":"response","command":"parse","success":false,"error":"\"type\" must be a string naming the command (one of ` + commands + `), got number 7"}`},
		{"unknown command", `{"id":"a","type":"frobnicate"}`, `{"id":"a","type":"response","command":"frobnicate","success":false,"error":"Unknown command: frobnicate (commands: ` + commands + `)"}`},
		{"unknown command, no id", `{"type":"response"}`, `{"type":"response","command":"response","success":false,"error":"Unknown command: response (commands: ` + commands + `)"}`},
		{"id not a string", `{"id":5,"type":"get_state"}`, `{"type":"response","command":"get_state","success":false,"error":"\"id\" must be a string, got number 5"}`},
		{"id null", `{"id":null,"type":"abort"}`, `{"type":"response","command":"abort","success":false,"error":"\"id\" must be a string, got null"}`},
		{"enabled a string", `{"id":"a","type":"set_auto_retry","enabled":"yes"}`, `{"id":"a","type":"response","command":"set_auto_retry","success":false,"error":"set_auto_retry: \"enabled\" must be true or false, got string \"yes\""}`},
		{"enabled missing", `{"id":"a","type":"set_auto_retry"}`, `{"id":"a","type":"response","command":"set_auto_retry","success":false,"error":"set_auto_retry: missing \"enabled\" (true or false)"}`},
		{"enabled a number", `{"type":"set_auto_retry","enabled":1}`, `{"type":"response","command":"set_auto_retry","success":false,"error":"set_auto_retry: \"enabled\" must be true or false, got number 1"}`},
		{"message missing", `{"id":"a","type":"prompt"}`, `{"id":"a","type":"response","command":"prompt","success":false,"error":"prompt: missing \"message\" (a string)"}`},
		{"message not a string", `{"id":"a","type":"prompt","message":["hi"]}`, `{"id":"a","type":"response","command":"prompt","success":false,"error":"prompt: \"message\" must be a string, got an array"}`},
		{"advance without ms", `{"id":"a","type":"advance"}`, `{"id":"a","type":"response","command":"advance","success":false,"error":"advance: missing \"ms\" (an integer from 0 to 1000000000000)"}`},
		{"advance negative", `{"id":"a","type":"advance","ms":-1}`, `{"id":"a","type":"response","command":"advance","success":false,"error":"advance: \"ms\" must be an integer from 0 to 1000000000000, got number -1"}`},
		{"advance fraction", `{"id":"a","type":"advance","ms":1.5}`, `{"id":"a","type":"response","command":"advance","success":false,"error":"advance: \"ms\" must be an integer from 0 to 1000000000000, got number 1.5"}`},
		{"advance string", `{"id":"a","type":"advance","ms":"10"}`, `{"id":"a","type":"response","command":"advance","success":false,"error":"advance: \"ms\" must be an integer from 0 to 1000000000000, got string \"10\""}`},
		{"advance too far", `{"id":"a","type":"advance","ms":1e13}`, `{"id":"a","type":"response","command":"advance","success":false,"error":"advance: \"ms\" must be an integer from 0 to 1000000000000, got number 1e13"}`},
		{"duplicate type", `{"id":"a","type":"get_state","type":"abort"}`, `{"id":"a","type":"response","command":"parse","success":false,"error":"Failed to parse command: duplicate key \"type\" (each key may appear once)"}`},
		{"duplicate type, escaped", `{"type":"get_state","t\u0079pe":"abort"}`, `{"type":"response","command":"parse","success":false,"error":"Failed to parse command: duplicate key \"type\" (each key may appear once)"}`},
		{"duplicate field", `{"id":"a","type":"set_auto_retry","enabled":true,"enabled":false}`, `{"id":"a","type":"response","command":"set_auto_retry","success":false,"error":"Failed to parse command: duplicate key \"enabled\" (each key may appear once)"}`},
		{"duplicate id", `{"id":"a","id":"b","type":"abort"}`, `{"id":"a","type":"response","command":"abort","success":false,"error":"Failed to parse command: duplicate key \"id\" (each key may appear once)"}`},
		{"keys differ in case", `{"id":"a","type":"get_state","TYPE":"abort","Id":"b"}`, `{"id":"a","type":"response","command":"get_state","success":true,"data":{"isStreaming":false,"messageCount":0,"autoCompactionEnabled":true,"sessionId":"session-1","autoRetryEnabled":true,"isRetrying":false,"retryAttempt":0,"retryState":"idle","nextRetryAt":null,"profile":"omp-2026-02","model":{"id":"claude-sonnet-4-5","provider":"anthropic","api":"anthropic-messages"},"thinkingLevel":"off","isCompacting":false,"steeringMode":"one-at-a-time","followUpMode":"one-at-a-time","interruptMode":"immediate","queuedMessageCount":0}}`},
		{"escapes kept in the id", `{"id":"a\"b<>\u00e9","type":"nope"}`, `{"id":"a\"b<>é","type":"response","command":"nope","success":false,"error":"Unknown command: nope (commands: ` + commands + `)"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The bad line is answered, and the server goes on.
			got := serveVirtual(t, "{}", tt.line+"\n"+`{"id":"after","type":"abort_retry"}`+"\n")
			diffLines(t, got, []string{tt.want, `{"id":"after","type":"response","command":"abort_retry","success":true}`})
		})
	}
}

func TestServeLineEndingsAndBlankLines(t *testing.T) {
	input := "\r\n{\"id\":\"a\",\"type\":\"abort_retry\"}\r\n   \n\n{\"id\":\"b\",\"type\":\"advance\",\"ms\":1e3}\n{\"id\":\"c\",\"type\":\"abort\"}" // no final newline
	want := []string{
		`{"id":"a","type":"response","command":"abort_retry","success":true}`,
		`{"id":"b","type":"response","command":"advance","success":true,"data":{"t":1000}}`,
		`{"id":"c","type":"response","command":"abort","success":true}`,
	}
	diffLines(t, serveVirtual(t, "{}", input), want)
}

func TestServeLongLines(t *testing.T) {
	// pad makes a get_state command exactly n bytes long.
	pad := func(id string, n int) string {
		head := `{"id":"` + id + `","type":"get_state","pad":"`
		return head + strings.Repeat("x", n-len(head)-2) + `"}`
	}
	exact, over := pad("exact", rpc.MaxLineSize), pad("over", rpc.MaxLineSize+1)
	if len(exact) != rpc.MaxLineSize || len(over) != rpc.MaxLineSize+1 {
		t.Fatal("bad padding")
	}
	tooLong := fmt.Sprintf(`{"type":"response","command":"parse","success":false,"error":"Failed to parse command: line longer than %d bytes (discarded unread)"}`, rpc.MaxLineSize)
	state := `"data":{"isStreaming":false,"messageCount":0,"autoCompactionEnabled":true,"sessionId":"session-1","autoRetryEnabled":true,"isRetrying":false,"retryAttempt":0,"retryState":"idle","nextRetryAt":null,"profile":"omp-2026-02","model":{"id":"claude-sonnet-4-5","provider":"anthropic","api":"anthropic-messages"},"thinkingLevel":"off","isCompacting":false,"steeringMode":"one-at-a-time","followUpMode":"one-at-a-time","interruptMode":"immediate","queuedMessageCount":0}}`
	input := exact + "\n" + exact + "\r\n" + over + "\n" + over + "\r\n" +
		strings.Repeat("y", 5*rpc.MaxLineSize) + "\n" + `{"id":"after","type":"abort_retry"}` + "\n" + over // the last without a newline
	want := []string{
		`{"id":"exact","type":"response","command":"get_state","success":true,` + state,
		`{"id":"exact","type":"response","command":"get_state","success":true,` + state,
		tooLong,
		tooLong,
		tooLong,
		`{"id":"after","type":"response","command":"abort_retry","success":true}`,
		tooLong,
	}
	diffLines(t, serveVirtual(t, "{}", input), want)
}

func TestServeAdvanceOnRealClockIsAnError(t *testing.T) {
	in, inW := io.Pipe()
	out := &lockedBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- rpc.Serve(context.Background(), in, out, rpc.Options{Scenario: parseScenario(t, "{}"), Clock: clock.NewMock()})
	}()
	fmt.Fprintln(inW, `{"id":"a","type":"advance","ms":10}`)
	inW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	diffLines(t, splitLines(out.String()), []string{
		`{"id":"a","type":"response","command":"advance","success":false,"error":"advance needs --virtual (this server runs on the real clock)"}`,
	})
}

// realClockServer runs a real-clock server in a synctest bubble (its
// clock the time package's, the bubble's fake time); the test writes
// commands with send, reads output lines with expect and moves the clock
// on with advance.
type realClockServer struct {
	t     *testing.T
	inW   *io.PipeWriter
	lines chan string
	done  chan error
}

// advance moves the bubble's clock d on, once every goroutine in it waits:
// the server's loop waits on its timer, armed for the next event, before
// the time passes, so that the timer fires when its time comes. (A mock
// clock's Add could run before the loop armed it, and the timer, armed
// for a time already passed, never fired.)
func (s *realClockServer) advance(d time.Duration) { time.Sleep(d) }

func startRealClock(t *testing.T, scenario string) *realClockServer {
	t.Helper()
	in, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &realClockServer{t: t, inW: inW, lines: make(chan string, 100), done: make(chan error, 1)}
	sc := parseScenario(t, scenario)
	go func() {
		err := rpc.Serve(context.Background(), in, outW, rpc.Options{Scenario: sc, Clock: clock.New()})
		outW.Close()
		s.done <- err
	}()
	go func() {
		defer close(s.lines)
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		for range s.lines {
		}
		<-s.done
	})
	return s
}

func (s *realClockServer) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.inW, line+"\n"); err != nil {
		s.t.Fatal(err)
	}
}

func (s *realClockServer) expect(want ...string) {
	s.t.Helper()
	for _, w := range want {
		select {
		case got, ok := <-s.lines:
			if !ok {
				s.t.Fatalf("output ended, want %s", w)
			}
			if got != w {
				s.t.Fatalf("got  %s\nwant %s", got, w)
			}
		case <-time.After(10 * time.Second):
			s.t.Fatalf("no output within 10s, want %s", w)
		}
	}
}

// TestServeRealClock and the test below run in a synctest bubble
// (startRealClock).
func TestServeRealClock(t *testing.T) { synctest.Test(t, testServeRealClock) }

func testServeRealClock(t *testing.T) {
	s := startRealClock(t, oneError)
	s.send(`{"id":"p","type":"prompt","message":"hi"}`)
	s.expect(
		`{"id":"p","type":"response","command":"prompt","success":true,"data":{"prompt":1}}`,
		`{"type":"agent_start"}`,
		msgEnd(rt(0), "error", "529 overloaded_error"),
		agentEnd(rt(0), user(rt(0), "hi"), asst(rt(0), "error", "529 overloaded_error")),
		`{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"529 overloaded_error"}`,
	)
	s.advance(1999 * time.Millisecond)
	s.send(`{"id":"s","type":"get_state"}`)
	s.expect(`{"id":"s","type":"response","command":"get_state","success":true,"data":{"isStreaming":true,"messageCount":1,"autoCompactionEnabled":true,"sessionId":"session-1","autoRetryEnabled":true,"isRetrying":true,"retryAttempt":1,"retryState":"backoff","nextRetryAt":2000,"profile":"omp-2026-02","model":{"id":"claude-sonnet-4-5","provider":"anthropic","api":"anthropic-messages"},"thinkingLevel":"off","isCompacting":false,"steeringMode":"one-at-a-time","followUpMode":"one-at-a-time","interruptMode":"immediate","queuedMessageCount":0}}`)
	s.advance(time.Millisecond) // the backoff ends: the retried run, on its own
	s.expect(
		`{"type":"agent_start"}`,
		msgEnd(rt(2000), "stop", ""),
		`{"type":"auto_retry_end","success":true,"attempt":1}`,
		agentEnd(rt(2000), asst(rt(2000), "stop", "")),
		`{"type":"prompt_resolved","prompt":1}`,
	)
}

func TestServeRealClockAbortRetryAndEOF(t *testing.T) {
	synctest.Test(t, testServeRealClockAbortRetryAndEOF)
}

func testServeRealClockAbortRetryAndEOF(t *testing.T) {
	scenario := `
turns:
  - {stopReason: error, errorMessage: "529 overloaded_error"}
  - {stopReason: error, errorMessage: "529 overloaded_error"}
  - {stopReason: stop, durationMs: 60000}
`
	s := startRealClock(t, scenario)
	s.send(`{"type":"prompt","message":"hi"}`)
	s.expect(
		`{"type":"response","command":"prompt","success":true,"data":{"prompt":1}}`,
		`{"type":"agent_start"}`,
		msgEnd(rt(0), "error", "529 overloaded_error"),
		agentEnd(rt(0), user(rt(0), "hi"), asst(rt(0), "error", "529 overloaded_error")),
		`{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"529 overloaded_error"}`,
	)
	s.advance(500 * time.Millisecond)
	s.send(`{"id":"r","type":"abort_retry"}`)
	s.expect(
		`{"id":"r","type":"response","command":"abort_retry","success":true}`,
		`{"type":"auto_retry_end","success":false,"attempt":1,"finalError":"Retry cancelled"}`,
		`{"type":"prompt_resolved","prompt":1}`,
	)
	// A new chain, then a retried run in flight (60 s) when the input ends:
	// the end of the input aborts it (the sound variant ends the chain).
	s.send(`{"type":"prompt","message":"again"}`)
	s.expect(
		`{"type":"response","command":"prompt","success":true,"data":{"prompt":2}}`,
		`{"type":"agent_start"}`,
		msgEnd(rt(500), "error", "529 overloaded_error"),
		agentEnd(rt(500), user(rt(500), "again"), asst(rt(500), "error", "529 overloaded_error")),
		`{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"529 overloaded_error"}`,
	)
	s.advance(3 * time.Second)
	s.expect(`{"type":"agent_start"}`)
	s.inW.Close()
	s.expect(
		`{"type":"auto_retry_end","success":false,"attempt":1,"finalError":"Retry cancelled"}`,
		msgEnd(rt(3500), "aborted", "Request was aborted"),
		agentEnd(rt(3500), asst(rt(3500), "aborted", "Request was aborted")),
		`{"type":"prompt_resolved","prompt":2}`,
	)
	select {
	case l, ok := <-s.lines:
		if ok {
			t.Fatalf("unexpected line after the end: %s", l)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not end")
	}
	if err := <-s.done; err != nil {
		t.Fatal(err)
	}
	s.done <- nil // for the cleanup
}

func TestServeOutputFailure(t *testing.T) {
	boom := errors.New("boom")
	err := rpc.Serve(context.Background(), strings.NewReader(`{"type":"get_state"}`+"\n"), failingWriter{boom},
		rpc.Options{Scenario: parseScenario(t, "{}"), Virtual: true})
	if !errors.Is(err, rpc.ErrOutput) || !errors.Is(err, boom) {
		t.Fatalf("got %v, want ErrOutput wrapping boom", err)
	}
}

func TestServeContextCancelled(t *testing.T) {
	in, inW := io.Pipe()
	defer inW.Close()
	ctx, cancel := context.WithCancel(context.Background())
	out := &lockedBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- rpc.Serve(ctx, in, out, rpc.Options{Scenario: parseScenario(t, "{}"), Clock: clock.NewMock()})
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

func TestServeNeedsScenario(t *testing.T) {
	if err := rpc.Serve(context.Background(), strings.NewReader(""), io.Discard, rpc.Options{}); err == nil {
		t.Fatal("no error without a scenario")
	}
}

type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }

// TestServeAdvancePastTheLargestVirtualTime: an advance that would pass
// the largest virtual time (2^63-1 ns) fails with the limit and leaves the
// time as it was (it used to saturate, and later backoffs took 0 ms).
func TestServeAdvancePastTheLargestVirtualTime(t *testing.T) {
	var in strings.Builder
	for i := range 9 {
		fmt.Fprintf(&in, `{"id":"a%d","type":"advance","ms":1000000000000}`+"\n", i)
	}
	in.WriteString(`{"id":"over","type":"advance","ms":1000000000000}` + "\n")
	in.WriteString(`{"id":"still","type":"advance","ms":0}` + "\n")
	in.WriteString(`{"id":"last","type":"advance","ms":223372036854}` + "\n")
	got := serveVirtual(t, "{}", in.String())
	want := []string{}
	for i := range 9 {
		want = append(want, fmt.Sprintf(`{"id":"a%d","type":"response","command":"advance","success":true,"data":{"t":%d000000000000}}`, i, i+1))
	}
	want = append(want,
		`{"id":"over","type":"response","command":"advance","success":false,"error":"advance: \"ms\" = 1000000000000 would pass the largest virtual time, 9223372036854 ms (now 9000000000000 ms: at most 223372036854 more)"}`,
		`{"id":"still","type":"response","command":"advance","success":true,"data":{"t":9000000000000}}`,
		`{"id":"last","type":"response","command":"advance","success":true,"data":{"t":9223372036854}}`,
	)
	diffLines(t, got, want)
}

// TestServeSetRetrySettings: set_retry_settings merges key by key over the
// settings in force (nested objects too), takes effect for the next
// decision and refuses what is invalid, naming it; a fallback is an event.
func TestServeSetRetrySettings(t *testing.T) {
	scenario := `
turns:
  - {stopReason: error, errorMessage: "529 overloaded_error"}
  - {stopReason: error, errorMessage: "529 overloaded_error"}
  - {stopReason: stop}
`
	input := `{"id":"bad1","type":"set_retry_settings","settings":{"jitter":{"ratio":2}}}
{"id":"bad2","type":"set_retry_settings","settings":{"maxRetrys":1}}
{"id":"bad3","type":"set_retry_settings","settings":[1]}
{"id":"bad4","type":"set_retry_settings"}
{"id":"ok","type":"set_retry_settings","settings":{"maxRetries":0,"fallback":["model-b"],"retryAfter":{"use":"floor"}}}
{"id":"ok2","type":"set_retry_settings","settings":{"retryAfter":{"maxWaitMs":60000}}}
{"id":"p","type":"prompt","message":"one"}
`
	out := serveVirtual(t, scenario, input)
	want := []string{
		`{"id":"ok","type":"response","command":"set_retry_settings","success":true}`,
		`{"id":"ok2","type":"response","command":"set_retry_settings","success":true}`,
		`{"id":"p","type":"response","command":"prompt","success":true,"data":{"prompt":1}}`,
		`{"t":0,"type":"agent_start"}`,
		msgEnd(vt(0), "error", "529 overloaded_error"),
		agentEnd(vt(0), user(vt(0), "one"), asst(vt(0), "error", "529 overloaded_error")),
		`{"t":0,"type":"retry_fallback","from":"claude-sonnet-4-5","to":"model-b"}`,
		`{"t":0,"type":"auto_retry_start","attempt":1,"maxAttempts":0,"delayMs":0,"errorMessage":"529 overloaded_error"}`,
		`{"t":0,"type":"agent_start"}`,
		msgEndOf(vt(0), "model-b", "error", "529 overloaded_error"),
		agentEnd(vt(0), asstOf(vt(0), "model-b", "error", "529 overloaded_error")),
		`{"t":0,"type":"auto_retry_end","success":false,"attempt":1,"finalError":"529 overloaded_error"}`,
		`{"t":0,"type":"prompt_resolved","prompt":1}`,
	}
	var lines []string
	errs := map[string]string{}
	for _, l := range out {
		var r struct {
			ID      string `json:"id"`
			Type    string `json:"type"`
			Success *bool  `json:"success"`
			Error   string `json:"error"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		if r.Type == "response" && r.Success != nil && !*r.Success {
			errs[r.ID] = r.Error
			continue
		}
		lines = append(lines, l)
	}
	diffLines(t, lines, want)
	for id, sub := range map[string][]string{
		"bad1": {"jitter.ratio", "from 0 to 1"},
		"bad2": {"maxRetrys"},
		"bad3": {`"settings" must be an object`},
		"bad4": {`missing "settings"`},
	} {
		for _, s := range sub {
			if !strings.Contains(errs[id], s) {
				t.Errorf("%s: error %q lacks %q", id, errs[id], s)
			}
		}
	}
}
