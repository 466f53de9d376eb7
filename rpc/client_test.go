package rpc_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/internal/testkit"
	"github.com/ohmypi/retryfsm/rpc"
)

// waitFor bounds every wait for the server; nothing sleeps.
const waitFor = 20 * time.Second

// startServer starts "retrysim rpc --scenario FILE args..." for the test.
func startServer(t *testing.T, scenario string, args ...string) *rpc.Client {
	t.Helper()
	path := filepath.Join(t.TempDir(), "scenario.yaml")
	if err := os.WriteFile(path, []byte(scenario), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := rpc.Start(context.Background(), retrysimBin, append([]string{"--scenario", path}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	t.Cleanup(cancel)
	return ctx
}

// nextEvent returns the next event, failing after waitFor.
func nextEvent(t *testing.T, c *rpc.Client) rpc.Event {
	t.Helper()
	select {
	case ev, ok := <-c.Events():
		if !ok {
			t.Fatal("the event channel was closed")
		}
		return ev
	case <-time.After(waitFor):
		t.Fatalf("no event within %v", waitFor)
	}
	return rpc.Event{}
}

// expectEvents reads len(want) events and compares their lines.
func expectEvents(t *testing.T, c *rpc.Client, want ...string) {
	t.Helper()
	for _, w := range want {
		if got := string(nextEvent(t, c).Raw); got != w {
			t.Fatalf("event:\n got: %s\nwant: %s", got, w)
		}
	}
}

// restEvents closes the input and returns every remaining event line.
func restEvents(t *testing.T, c *rpc.Client) []string {
	t.Helper()
	if err := c.CloseInput(); err != nil {
		t.Fatal(err)
	}
	var out []string
	timeout := time.After(waitFor)
	for {
		select {
		case ev, ok := <-c.Events():
			if !ok {
				return out
			}
			out = append(out, string(ev.Raw))
		case <-timeout:
			t.Fatalf("the events did not end within %v; got %q", waitFor, out)
		}
	}
}

// chainStart are the events of a prompt "hello" whose reply is retried.
var chainStart = []string{
	`{"t":0,"type":"agent_start"}`,
	msgEnd(vt(0), "error", "529 overloaded_error"),
	agentEnd(vt(0), user(vt(0), "hello"), asst(vt(0), "error", "529 overloaded_error")),
	`{"t":0,"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"529 overloaded_error"}`,
}

func TestClientAbortRetryDuringBackoffVirtual(t *testing.T) {
	t.Parallel()
	c := startServer(t, oneError, "--virtual")
	ctx := ctxT(t)
	n, err := c.Prompt(ctx, "hello")
	if err != nil || n != 1 {
		t.Fatalf("Prompt = %d, %v; want 1", n, err)
	}
	expectEvents(t, c, chainStart...)
	now, err := c.Advance(ctx, 1500*time.Millisecond)
	if err != nil || now != 1500*time.Millisecond {
		t.Fatalf("Advance = %v, %v; want 1.5s", now, err)
	}
	st, err := c.GetState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	at := 2000.0
	want := rpc.State{IsStreaming: true, MessageCount: 1, AutoCompactionEnabled: true, SessionID: "session-1",
		AutoRetryEnabled: true, IsRetrying: true, RetryAttempt: 1, RetryState: "backoff", NextRetryAt: &at, Profile: "omp-2026-02",
		Model:         &rpc.ModelInfo{ID: "claude-sonnet-4-5", Provider: "anthropic", API: "anthropic-messages"},
		ThinkingLevel: "off", SteeringMode: "one-at-a-time", FollowUpMode: "one-at-a-time", InterruptMode: "immediate"}
	if !reflect.DeepEqual(st, want) {
		t.Fatalf("state in the backoff = %+v, want %+v", st, want)
	}
	if err := c.AbortRetry(ctx); err != nil {
		t.Fatal(err)
	}
	expectEvents(t, c,
		`{"t":1500,"type":"auto_retry_end","success":false,"attempt":1,"finalError":"Retry cancelled"}`,
		`{"t":1500,"type":"prompt_resolved","prompt":1}`)
	st, err = c.GetState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.IsRetrying || st.IsStreaming || st.RetryAttempt != 0 || st.RetryState != "cancelled" {
		t.Fatalf("state after abort_retry = %+v", st)
	}
	// Nothing else happens: the cancelled backoff does not retry.
	if _, err := c.Advance(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	if rest := restEvents(t, c); len(rest) != 0 {
		t.Fatalf("events after the cancel: %q", rest)
	}
}

func TestClientEventsInOrder(t *testing.T) {
	t.Parallel()
	scenario := `
settings: {maxRetries: 2, baseDelayMs: 1000}
turns:
  - {stopReason: error, errorMessage: "529 overloaded_error"}
  - {stopReason: toolUse, durationMs: 100}
  - {stopReason: error, errorMessage: "503 service unavailable"}
  - {stopReason: error, errorMessage: "500 internal error"}
  - {stopReason: error, errorMessage: "502 bad gateway"}
  - {stopReason: error, errorMessage: "504 gateway timeout"}
`
	c := startServer(t, scenario, "--virtual")
	ctx := ctxT(t)
	if _, err := c.Prompt(ctx, "go"); err != nil {
		t.Fatal(err)
	}
	got := restEvents(t, c) // runs to quiescence
	want := []string{
		`{"t":0,"type":"agent_start"}`,
		msgEnd(vt(0), "error", "529 overloaded_error"),
		agentEnd(vt(0), user(vt(0), "go"), asst(vt(0), "error", "529 overloaded_error")),
		`{"t":0,"type":"auto_retry_start","attempt":1,"maxAttempts":2,"delayMs":1000,"errorMessage":"529 overloaded_error"}`,
		`{"t":1000,"type":"agent_start"}`,
		// A toolUse reply ends the chain in the middle of the run.
		msgEnd(vt(1100), "toolUse", ""),
		`{"t":1100,"type":"auto_retry_end","success":true,"attempt":1}`,
		msgEnd(vt(1100), "error", "503 service unavailable"),
		agentEnd(vt(1100), asst(vt(1100), "toolUse", ""), asst(vt(1100), "error", "503 service unavailable")),
		`{"t":1100,"type":"auto_retry_start","attempt":1,"maxAttempts":2,"delayMs":1000,"errorMessage":"503 service unavailable"}`,
		`{"t":2100,"type":"agent_start"}`,
		msgEnd(vt(2100), "error", "500 internal error"),
		agentEnd(vt(2100), asst(vt(2100), "error", "500 internal error")),
		`{"t":2100,"type":"auto_retry_start","attempt":2,"maxAttempts":2,"delayMs":2000,"errorMessage":"500 internal error"}`,
		`{"t":4100,"type":"agent_start"}`,
		msgEnd(vt(4100), "error", "502 bad gateway"),
		agentEnd(vt(4100), asst(vt(4100), "error", "502 bad gateway")),
		`{"t":4100,"type":"auto_retry_end","success":false,"attempt":2,"finalError":"502 bad gateway"}`,
		`{"t":4100,"type":"prompt_resolved","prompt":1}`,
	}
	diffLines(t, got, want)
}

func TestClientToggle(t *testing.T) {
	t.Parallel()
	scenario := `
turns:
  - {stopReason: error, errorMessage: "529 overloaded_error"}
  - {stopReason: error, errorMessage: "529 overloaded_error"}
  - {stopReason: stop}
`
	c := startServer(t, scenario, "--virtual")
	ctx := ctxT(t)
	if err := c.SetAutoRetry(ctx, false); err != nil {
		t.Fatal(err)
	}
	if st, err := c.GetState(ctx); err != nil || st.AutoRetryEnabled {
		t.Fatalf("after SetAutoRetry(false): %+v, %v", st, err)
	}
	if _, err := c.Prompt(ctx, "one"); err != nil {
		t.Fatal(err)
	}
	// Disabled: the error is not retried.
	expectEvents(t, c,
		`{"t":0,"type":"agent_start"}`,
		msgEnd(vt(0), "error", "529 overloaded_error"),
		agentEnd(vt(0), user(vt(0), "one"), asst(vt(0), "error", "529 overloaded_error")),
		`{"t":0,"type":"prompt_resolved","prompt":1}`)
	if err := c.SetAutoRetry(ctx, true); err != nil {
		t.Fatal(err)
	}
	if st, err := c.GetState(ctx); err != nil || !st.AutoRetryEnabled {
		t.Fatalf("after SetAutoRetry(true): %+v, %v", st, err)
	}
	if n, err := c.Prompt(ctx, "two"); err != nil || n != 2 {
		t.Fatalf("Prompt = %d, %v", n, err)
	}
	expectEvents(t, c,
		`{"t":0,"type":"agent_start"}`,
		msgEnd(vt(0), "error", "529 overloaded_error"),
		agentEnd(vt(0), user(vt(0), "two"), asst(vt(0), "error", "529 overloaded_error")),
		`{"t":0,"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"529 overloaded_error"}`)
	// Busy: a prompt is rejected with a Go error carrying the original's text.
	_, err := c.Prompt(ctx, "three")
	var re *rpc.ResponseError
	if !errors.As(err, &re) || re.Command != "prompt" || !strings.Contains(re.Message, "Agent is already processing") || re.ID != "req_7" {
		t.Fatalf("busy prompt: %v (%+v)", err, re)
	}
	// Disabling during the backoff does not stop the retry already scheduled.
	if err := c.SetAutoRetry(ctx, false); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Advance(ctx, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	expectEvents(t, c,
		`{"t":2000,"type":"agent_start"}`,
		msgEnd(vt(2000), "stop", ""),
		`{"t":2000,"type":"auto_retry_end","success":true,"attempt":1}`,
		agentEnd(vt(2000), asst(vt(2000), "stop", "")),
		`{"t":2000,"type":"prompt_resolved","prompt":2}`)
}

// TestClientRealClockAbortRetry: retrysim on the real clock, its
// backoffs of 150, 300, 600 and 1200 ms waited for, the fourth cancelled.
// Opt-in (RETRYSIM_SOAK, which .ci/run sets), as every test whose
// outcome the real clock can change: under load the cancel could come
// after the fourth backoff.
func TestClientRealClockAbortRetry(t *testing.T) {
	testkit.Need(t, testkit.Soak, "backoffs on the real clock")
	t.Parallel()
	scenario := `
settings: {maxRetries: 5, baseDelayMs: 150}
turns:
  - {stopReason: error, errorMessage: "529 overloaded_error"}
  - {stopReason: error, errorMessage: "529 overloaded_error"}
  - {stopReason: error, errorMessage: "529 overloaded_error"}
  - {stopReason: error, errorMessage: "529 overloaded_error"}
  - {stopReason: stop}
`
	c := startServer(t, scenario)
	ctx := ctxT(t)
	sent := time.Now()
	if _, err := c.Prompt(ctx, "hello"); err != nil {
		t.Fatal(err)
	}
	// Each retried run starts after the sum of the backoffs before it, counted
	// from the prompt (a lower bound that does not depend on when events are
	// read).
	minStart := []time.Duration{0, 150 * time.Millisecond, 450 * time.Millisecond, 1050 * time.Millisecond}
	for attempt := 1; attempt <= 4; {
		ev := nextEvent(t, c)
		if strings.Contains(string(ev.Raw), `"t":`) {
			t.Fatalf("an event with t on the real clock: %s", ev.Raw)
		}
		if ev.Type != "auto_retry_start" {
			continue
		}
		if d := time.Since(sent); d < minStart[attempt-1] {
			t.Errorf("attempt %d started %v after the prompt, want at least %v", attempt, d, minStart[attempt-1])
		}
		var e struct {
			Attempt int   `json:"attempt"`
			DelayMs int64 `json:"delayMs"`
		}
		if err := ev.Decode(&e); err != nil || e.Attempt != attempt || e.DelayMs != 150<<(attempt-1) {
			t.Fatalf("auto_retry_start %d: %s (%v)", attempt, ev.Raw, err)
		}
		attempt++
	}
	// Cancel the fourth backoff (1200 ms).
	if err := c.AbortRetry(ctx); err != nil {
		t.Fatal(err)
	}
	expectEvents(t, c,
		`{"type":"auto_retry_end","success":false,"attempt":4,"finalError":"Retry cancelled"}`,
		`{"type":"prompt_resolved","prompt":1}`)
	if st, err := c.GetState(ctx); err != nil || st.IsRetrying || st.IsStreaming {
		t.Fatalf("state after the cancel: %+v, %v", st, err)
	}
}

func TestClientAbortVirtual(t *testing.T) {
	t.Parallel()
	c := startServer(t, oneError, "--virtual")
	ctx := ctxT(t)
	if _, err := c.Prompt(ctx, "hello"); err != nil {
		t.Fatal(err)
	}
	expectEvents(t, c, chainStart...)
	if err := c.Abort(ctx); err != nil {
		t.Fatal(err)
	}
	expectEvents(t, c,
		`{"t":0,"type":"auto_retry_end","success":false,"attempt":1,"finalError":"Retry cancelled"}`,
		`{"t":0,"type":"prompt_resolved","prompt":1}`)
}

func TestClientBadInput(t *testing.T) {
	t.Parallel()
	c := startServer(t, "{}", "--virtual")
	ctx := ctxT(t)
	long := `{"type":"get_state","pad":"` + strings.Repeat("x", rpc.MaxLineSize) + `"}`
	raw := []struct{ line, want string }{
		{`not json`, `{"type":"response","command":"parse","success":false,"error":"Failed to parse command: invalid JSON: invalid character 'o' in literal null (expecting 'u')"}`},
		{`["get_state"]`, `{"type":"response","command":"parse","success":false,"error":"Failed to parse command: expected a JSON object, got an array"}`},
		{`true`, `{"type":"response","command":"parse","success":false,"error":"Failed to parse command: expected a JSON object, got boolean true"}`},
		{long, fmt.Sprintf(`{"type":"response","command":"parse","success":false,"error":"Failed to parse command: line longer than %d bytes (discarded unread)"}`, rpc.MaxLineSize)},
		{`{"id":"x1"}`, `{"id":"x1","type":"response","command":"parse","success":false,"error":"missing \"type\" (the command: one of ` + commandList + `)"}`},
		{`{"id":"x2","type":"reboot"}`, `{"id":"x2","type":"response","command":"reboot","success":false,"error":"Unknown command: reboot (commands: ` + commandList + `)"}`},
		{`{"id":"x3","type":"set_auto_retry","enabled":"yes"}`, `{"id":"x3","type":"response","command":"set_auto_retry","success":false,"error":"set_auto_retry: \"enabled\" must be true or false, got string \"yes\""}`},
		{`{"id":7,"type":"abort"}`, `{"type":"response","command":"abort","success":false,"error":"\"id\" must be a string, got number 7"}`},
		{"{\"id\":\"x4\",\"type\":\"abort_retry\"}\r", `{"id":"x4","type":"response","command":"abort_retry","success":true}`},
	}
	for _, r := range raw {
		if err := c.SendRaw([]byte(r.line)); err != nil {
			t.Fatal(err)
		}
		ev := nextEvent(t, c)
		if ev.Type != "response" || string(ev.Raw) != r.want {
			t.Fatalf("after %.60q:\n got: %s\nwant: %s", r.line, ev.Raw, r.want)
		}
		// The server goes on.
		if _, err := c.GetState(ctx); err != nil {
			t.Fatalf("get_state after %.60q: %v", r.line, err)
		}
	}
	// Through the client's own calls: an error response is a Go error
	// that names the request.
	tests := []struct {
		typ    string
		fields map[string]any
		want   string
	}{
		{"set_auto_retry", map[string]any{"enabled": "yes"}, `rpc: set_auto_retry (id req_10) failed: set_auto_retry: "enabled" must be true or false, got string "yes"`},
		{"set_auto_retry", nil, `rpc: set_auto_retry (id req_11) failed: set_auto_retry: missing "enabled" (true or false)`},
		{"prompt", map[string]any{"message": 3}, `rpc: prompt (id req_12) failed: prompt: "message" must be a string, got number 3`},
		{"launch", nil, `rpc: launch (id req_13) failed: Unknown command: launch (commands: ` + commandList + `)`},
	}
	for _, tt := range tests {
		_, err := c.Call(ctx, tt.typ, tt.fields)
		var re *rpc.ResponseError
		if !errors.As(err, &re) || err.Error() != tt.want {
			t.Errorf("Call(%s, %v) = %v, want %s", tt.typ, tt.fields, err, tt.want)
		}
	}
}

func TestClientAdvanceOnRealClockFails(t *testing.T) {
	t.Parallel()
	c := startServer(t, "{}")
	_, err := c.Advance(ctxT(t), time.Second)
	var re *rpc.ResponseError
	if !errors.As(err, &re) || !strings.Contains(re.Message, "advance needs --virtual") {
		t.Fatalf("Advance on the real clock: %v", err)
	}
}

func TestServerMissingFinalNewline(t *testing.T) {
	cmd := exec.Command(retrysimBin, "rpc", "--virtual")
	cmd.Stdin = strings.NewReader("{\"id\":\"a\",\"type\":\"get_state\"}\r\n{\"id\":\"b\",\"type\":\"abort\"}")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := splitLines(string(out))
	if len(lines) != 2 || !strings.HasPrefix(lines[0], `{"id":"a","type":"response","command":"get_state","success":true`) ||
		lines[1] != `{"id":"b","type":"response","command":"abort","success":true}` {
		t.Fatalf("output:\n%s", out)
	}
}

func TestServerClosedStdoutEndsQuietly(t *testing.T) {
	cmd := exec.Command(retrysimBin, "rpc", "--virtual")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdout.Close() // nobody reads the output
	done := make(chan error, 1)
	go func() {
		defer stdin.Close()
		for range 1000 {
			if _, err := io.WriteString(stdin, `{"type":"get_state"}`+"\n"); err != nil {
				done <- nil // the server is gone
				return
			}
		}
		done <- nil
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("exit: %v", err)
		}
	case <-time.After(waitFor):
		cmd.Process.Kill()
		<-exited
		t.Fatal("the server did not end")
	}
	<-done
	if stderr.String() != "" {
		t.Errorf("stderr not empty:\n%s", stderr.String())
	}
}

func TestClientSlowReaderDoesNotBlockResponses(t *testing.T) {
	t.Parallel()
	c := startServer(t, "{}", "--virtual")
	ctx := ctxT(t)
	const prompts = 500
	for i := 1; i <= prompts; i++ {
		n, err := c.Prompt(ctx, "hi")
		if err != nil || n != i {
			t.Fatalf("prompt %d: %d, %v", i, n, err)
		}
	}
	// 4 events per prompt were queued, none read; then read them in order.
	got := restEvents(t, c)
	if len(got) != 4*prompts {
		t.Fatalf("%d events, want %d", len(got), 4*prompts)
	}
	for i := 1; i <= prompts; i++ {
		if w := fmt.Sprintf(`{"t":0,"type":"prompt_resolved","prompt":%d}`, i); got[4*i-1] != w {
			t.Fatalf("event %d = %s, want %s", 4*i-1, got[4*i-1], w)
		}
	}
}

func TestClientTimeoutHasStderrTail(t *testing.T) {
	t.Parallel()
	c, err := rpc.Start(context.Background(), os.Args[0], fakeServerArg+"silent")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if ev := nextEvent(t, c); ev.Type != "ready" {
		t.Fatalf("fake server: %s", ev.Raw)
	}
	c.SetTimeout(500 * time.Millisecond)
	_, err = c.GetState(context.Background()) // no deadline: the client's timeout
	if !errors.Is(err, rpc.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want ErrTimeout", err)
	}
	for _, w := range []string{"rpc: timeout waiting for the response to get_state (id req_1) after 500ms (context deadline exceeded). Stderr: fake: starting\nfake: something went wrong"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q: %v", w, err)
		}
	}
	// A deadline of the caller's own.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := c.GetState(ctx); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "req_2") {
		t.Fatalf("got %v, want DeadlineExceeded", err)
	}
}

func TestClientPendingCallFailsWhenServerExits(t *testing.T) {
	t.Parallel()
	c, err := rpc.Start(context.Background(), os.Args[0], fakeServerArg+"crash")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.GetState(ctxT(t))
	if !errors.Is(err, rpc.ErrServerExited) {
		t.Fatalf("got %v, want ErrServerExited", err)
	}
	for _, w := range []string{"exit status 3", "fake: crashing on purpose"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q: %v", w, err)
		}
	}
	// Later calls fail at once, the same way.
	if err := c.AbortRetry(ctxT(t)); !errors.Is(err, rpc.ErrServerExited) {
		t.Fatalf("after the exit: %v", err)
	}
	if err := c.Close(); err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("Close = %v, want the exit status", err)
	}
	if _, err := c.GetState(ctxT(t)); !errors.Is(err, rpc.ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

// TestClientWireForm checks what the client writes, over NewClient and a
// hand-written server.
func TestClientWireForm(t *testing.T) {
	reqR, reqW := io.Pipe()
	respR, respW := io.Pipe()
	c := NewTestClient(t, respR, reqW)
	var got []string
	served := make(chan struct{})
	go func() {
		defer close(served)
		defer respW.Close()
		sc := bufio.NewScanner(reqR)
		for sc.Scan() {
			line := sc.Text()
			got = append(got, line)
			var req struct {
				ID, Type string
			}
			_ = json.Unmarshal([]byte(line), &req)
			// An event first, then the response.
			fmt.Fprintf(respW, `{"type":"some_event","n":%d}`+"\n", len(got))
			switch req.Type {
			case "prompt":
				fmt.Fprintf(respW, `{"id":%q,"type":"response","command":"prompt","success":true,"data":{"prompt":7}}`+"\n", req.ID)
			default:
				fmt.Fprintf(respW, `{"id":%q,"type":"response","command":%q,"success":true}`+"\n", req.ID, req.Type)
			}
		}
	}()
	ctx := ctxT(t)
	if err := c.SetAutoRetry(ctx, false); err != nil {
		t.Fatal(err)
	}
	if err := c.AbortRetry(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Prompt(ctx, `say "hi" <b>`); err != nil || n != 7 {
		t.Fatalf("Prompt = %d, %v", n, err)
	}
	if err := c.Abort(ctx); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 4; i++ {
		if ev := nextEvent(t, c); ev.Type != "some_event" || string(ev.Raw) != fmt.Sprintf(`{"type":"some_event","n":%d}`, i) {
			t.Fatalf("event %d: %s", i, ev.Raw)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	<-served
	diffLines(t, got, []string{
		`{"type":"set_auto_retry","enabled":false,"id":"req_1"}`,
		`{"type":"abort_retry","id":"req_2"}`,
		`{"type":"prompt","message":"say \"hi\" \u003cb\u003e","id":"req_3"}`,
		`{"type":"abort","id":"req_4"}`,
	})
}

// NewTestClient is rpc.NewClient closed at the end of the test.
func NewTestClient(t *testing.T, r io.Reader, w io.Writer) *rpc.Client {
	c := rpc.NewClient(r, w)
	t.Cleanup(func() { c.Close() })
	return c
}

// TestClientSetRetrySettings: SetRetrySettings merges settings in (the
// next chain falls back), refuses invalid ones with the server's error, and
// GetState reads nextRetryAt and the profile.
func TestClientSetRetrySettings(t *testing.T) {
	t.Parallel()
	scenario := `
turns:
  - {stopReason: error, errorMessage: "529 overloaded_error"}
  - {stopReason: stop}
`
	c := startServer(t, scenario, "--virtual")
	ctx := ctxT(t)
	if err := c.SetRetrySettings(ctx, map[string]any{"jitter": map[string]any{"mode": "sideways"}}); err == nil || !strings.Contains(err.Error(), "jitter.mode") {
		t.Fatalf("invalid mode: %v", err)
	}
	if err := c.SetRetrySettings(ctx, map[string]any{"baseDelayMs": 500}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Prompt(ctx, "one"); err != nil {
		t.Fatal(err)
	}
	st, err := c.GetState(ctx)
	if err != nil || st.NextRetryAt == nil || *st.NextRetryAt != 500 || st.Profile != "omp-2026-02" {
		t.Fatalf("in the wait: %+v, %v", st, err)
	}
}

// TestClientSetAutoCompaction: SetAutoCompaction switches the overflow
// hand-off, as GetState and the events show.
func TestClientSetAutoCompaction(t *testing.T) {
	t.Parallel()
	c := startServer(t, overflowTwice, "--virtual")
	ctx := ctxT(t)
	if err := c.SetAutoCompaction(ctx, false); err != nil {
		t.Fatal(err)
	}
	if st, err := c.GetState(ctx); err != nil || st.AutoCompactionEnabled {
		t.Fatalf("after SetAutoCompaction(false): %+v, %v", st, err)
	}
	if _, err := c.Prompt(ctx, "one"); err != nil {
		t.Fatal(err)
	}
	expectEvents(t, c, `{"t":0,"type":"agent_start"}`,
		msgEnd(vt(0), "error", "prompt is too long: 213462 tokens > 200000 maximum"),
		agentEnd(vt(0), user(vt(0), "one"), asst(vt(0), "error", "prompt is too long: 213462 tokens > 200000 maximum")),
		`{"t":0,"type":"prompt_resolved","prompt":1}`)
	if err := c.SetAutoCompaction(ctx, true); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Prompt(ctx, "two"); err != nil {
		t.Fatal(err)
	}
	expectEvents(t, c, `{"t":0,"type":"agent_start"}`,
		msgEnd(vt(0), "error", "prompt is too long: 213462 tokens > 200000 maximum"),
		agentEnd(vt(0), user(vt(0), "two"), asst(vt(0), "error", "prompt is too long: 213462 tokens > 200000 maximum")),
		`{"t":0,"type":"auto_compaction_start","reason":"overflow"}`,
		`{"t":0,"type":"auto_compaction_end","result":{"summary":"(simulated)"},"aborted":false,"willRetry":true}`,
		`{"t":0,"type":"prompt_resolved","prompt":2}`)
	st, err := c.GetState(ctx)
	if err != nil || !st.AutoCompactionEnabled || !st.IsCompacting || st.Model == nil || st.Model.API != "anthropic-messages" {
		t.Fatalf("in the compaction wait: %+v (model %+v), %v", st, st.Model, err)
	}
}
