package rpc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ohmypi/retryfsm/internal/jsonw"
	"github.com/ohmypi/retryfsm/internal/lines"
	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/policy/classify"
	"github.com/ohmypi/retryfsm/scenario"
	"github.com/ohmypi/retryfsm/session"
	"github.com/ohmypi/retryfsm/sim"
	"github.com/ohmypi/retryfsm/trace"
)

// MaxAdvanceMs is the largest "ms" an advance command accepts.
const MaxAdvanceMs = 1_000_000_000_000

// ErrOutput wraps the error of a failed write to the server's output (for
// example a closed pipe): the server stops at once.
var ErrOutput = errors.New("rpc: writing the output failed")

// Options configure Serve.
type Options struct {
	// Scenario scripts the simulated provider: its turns, settings,
	// variant, context window, compaction and identity fields are used;
	// its actions and initial prompt are ignored (prompts come from the
	// client). Required.
	Scenario *scenario.Scenario
	// Variant overrides the scenario's policy variant when not empty.
	Variant string
	// Virtual makes time move only on "advance" commands, and adds "t"
	// (virtual ms) to every event. Otherwise the session runs on Clock.
	Virtual bool
	// Clock is the wall clock of the real-clock mode (default: the system
	// clock).
	Clock clock.Clock
	// Log receives diagnostics (nothing but JSON lines goes to the
	// output). Nil discards them.
	Log io.Writer
	// Protocol is the protocol version spoken (SPEC.md §10.1): 0 or 1,
	// the original's (the default); 2, oh-my-pi 18.3.4's newer one: a
	// ready line first, prompt_result and session_settled in
	// prompt_resolved's place, errorId on auto_retry_start, completedAt
	// and duration on an assistant message_end.
	Protocol int
	// EndGrace is how long, on virtual time, the end of the input waits
	// (on the real clock) for ctx to end before virtual time runs on: a
	// signal that arrives with the end of input then wins over it, though
	// the process learns of the signal a little after it was sent. The
	// command line sets SignalGrace; 0 acts on the end of input at once.
	EndGrace time.Duration
}

// SignalGrace is the EndGrace of "retrysim rpc": time enough, on a loaded
// machine, for a signal sent with the end of the input to reach the
// session's ctx.
const SignalGrace = 100 * time.Millisecond

// Protocols are the protocol versions Serve speaks.
var Protocols = []int{1, 2}

// Serve speaks the JSON lines protocol: it reads commands from in, one per
// line, handles them one at a time on a simulated session and writes the
// responses and the session's events to out, one JSON object per line,
// flushing after every command and every batch of events.
//
// At the end of the input it runs the session to quiescence (Virtual) or
// performs an abort (real clock), writes the resulting events and returns
// nil. When ctx is done (a signal, say) it performs an abort in both modes
// (virtual time does not run on), writes the resulting events and returns
// ctx.Err(); a ctx done before the end of input is acted on wins over it
// (a signal and a closed input at the same moment abort; Options.EndGrace
// lets a signal still on its way win too). It returns an error wrapping
// ErrOutput when writing fails,
// sim.ErrTooManyEvents when the simulation runs away, and ErrInput
// wrapping the reader's error when reading fails (after the same abort).
// Every error it returns starts with "rpc: " and is not also written to
// Log. Malformed input never stops it: each bad line gets an error
// response.
//
// A goroutine reads in; it ends when in returns an error or io.EOF, which
// may be after Serve returned (a read blocked on a terminal or pipe cannot
// be interrupted).
func Serve(ctx context.Context, in io.Reader, out io.Writer, opt Options) error {
	if opt.Scenario == nil {
		return errors.New("rpc: Options.Scenario is required")
	}
	if opt.Protocol < 0 || opt.Protocol > 2 {
		return fmt.Errorf("rpc: protocol %d (allowed: 1, the original's, or 2, oh-my-pi 18.3.4's)", opt.Protocol)
	}
	s := &server{out: bufio.NewWriterSize(out, 64<<10), virtual: opt.Virtual, log: opt.Log, endGrace: opt.EndGrace}
	s.ev = newEventWriter(opt.Scenario, opt.Virtual)
	if opt.Protocol == 2 {
		// (its classifier is the session's policy's, set once the session is made)
		s.ev.v2 = &protocol2{promptIDs: map[int]promptID{}}
		// the newer protocol's first line: what the server speaks
		// (the agent's newer RPC mode announces protocolVersion 1 and
		// the versions it supports; a frame is a line here, never
		// reassembled, so both limits are the line limit)
		fmt.Fprintf(s.out, `{"type":"ready","protocolVersion":1,"supportedProtocolVersions":[1,2],"maxFrameBytes":%d,"maxReassembledFrameBytes":%d}`+"\n", MaxLineSize, MaxLineSize)
	}
	s.runCmd = s.runCommand
	s.dec = jsontext.NewDecoder(&s.rd)
	sess, err := sim.NewSession(opt.Scenario, sim.Options{Variant: opt.Variant, NoJSON: true, Sink: s})
	if err != nil {
		return err
	}
	s.sess, s.sched = sess, sess.Scheduler()
	if s.ev.v2 != nil {
		s.ev.v2.classifier = sess.Policy().Classifier()
	}
	if s.log == nil {
		s.log = io.Discard
	}
	if !opt.Virtual {
		s.rt = sim.NewRealTime(s.sched, opt.Clock)
		defer s.rt.Stop()
	}
	return s.serve(ctx, in)
}

// ErrInput wraps the error of a failed read of the server's input.
var ErrInput = errors.New("rpc: reading the input")

type server struct {
	rt      *sim.RealTime // nil with virtual time
	sess    *sim.Session
	sched   *sim.Scheduler
	out     *bufio.Writer
	virtual bool
	log     io.Writer
	ev      eventWriter
	// endGrace is Options.EndGrace.
	endGrace time.Duration
	// cmd is the command being run by the session, whose response lines
	// the session writes to its trace; nil between commands.
	cmd *running
	cur running // the command being run (cmd points at it)
	// next is the command line being decoded (rd and dec read it); event
	// the session event it becomes, message a prompt's text.
	next    command
	rd      bytes.Reader
	dec     *jsontext.Decoder
	event   session.Event
	message string
	runCmd  func() // runCommand, bound once
	scratch []byte
}

// running is a command being run by the session.
type running struct {
	id        string
	hasID     bool
	typ       string
	silent    bool // no response (the abort at the end of the input)
	responded bool
}

// inputLine is one line read by the reader goroutine (a copy).
type inputLine struct {
	line    []byte
	tooLong bool
	err     error // io.EOF at the end
}

// lineBuffers is the number of lines the reader goroutine may read ahead;
// their buffers are recycled through free, so reading makes no garbage.
const lineBuffers = 64

// readLines reads in line by line into out until an error (io.EOF
// included, which it sends too) or until done is closed. It copies each
// line into a buffer from free when there is one.
func readLines(in io.Reader, out chan<- inputLine, free <-chan []byte, done <-chan struct{}) {
	lr := lines.NewReader(in, MaxLineSize)
	for {
		line, tooLong, err := lr.Next()
		var buf []byte
		select {
		case buf = <-free:
		default:
		}
		msg := inputLine{line: append(buf, line...), tooLong: tooLong, err: err}
		select {
		case out <- msg:
		case <-done:
			return
		}
		if err != nil {
			return
		}
	}
}

func (s *server) serve(ctx context.Context, in io.Reader) error {
	lines := make(chan inputLine, lineBuffers)
	free := make(chan []byte, lineBuffers)
	done := make(chan struct{})
	defer close(done)
	go readLines(in, lines, free, done)
	for {
		var wake <-chan time.Time
		if s.rt != nil {
			if err := s.rt.RunDue(); err != nil {
				return s.fail(err)
			}
			wake = s.rt.Wake(0)
		}
		if err := s.flush(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return s.abortAndFinish(ctx.Err())
		case <-wake:
		case msg := <-lines:
			// select picks at random among ready cases: a signal received
			// before a line (the end of input included) is acted on
			// always wins, so virtual time never runs on after it.
			if err := ctx.Err(); err != nil {
				return s.abortAndFinish(err)
			}
			switch {
			case errors.Is(msg.err, io.EOF):
				if s.virtual {
					if s.signalledDuringGrace(ctx) {
						return s.abortAndFinish(ctx.Err())
					}
					return s.finish(nil)
				}
				return s.abortAndFinish(nil)
			case msg.err != nil:
				return s.abortAndFinish(fmt.Errorf("%w: %w", ErrInput, msg.err))
			}
			if err := s.handleLine(msg.line, msg.tooLong); err != nil {
				return err
			}
			if cap(msg.line) <= 4<<10 { // keep small buffers only
				select {
				case free <- msg.line[:0]:
				default:
				}
			}
		}
	}
}

// abortAndFinish ends a session early: an abort now (virtual time does not
// run on), its events, a flush; it returns cause.
func (s *server) abortAndFinish(cause error) error {
	s.cmd = &running{silent: true}
	err := s.at(func() { s.sess.Step(session.Event{Kind: session.Abort}) })
	s.cmd = nil
	if err != nil {
		return s.fail(err)
	}
	if err := s.flush(); err != nil {
		return err
	}
	return cause
}

// signalledDuringGrace waits up to endGrace of real time for ctx to end,
// and says whether it did (Options.EndGrace).
func (s *server) signalledDuringGrace(ctx context.Context) bool {
	if s.endGrace <= 0 {
		return false
	}
	t := time.NewTimer(s.endGrace)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return true
	case <-t.C:
		return false
	}
}

// finish ends a virtual session: it runs to quiescence and flushes.
func (s *server) finish(cause error) error {
	if err := s.sched.Drain(); err != nil {
		return s.fail(err)
	}
	if err := s.flush(); err != nil {
		return err
	}
	return cause
}

// fail reports a runaway simulation, writing what it produced.
func (s *server) fail(err error) error {
	if ferr := s.flush(); ferr != nil {
		return ferr
	}
	return fmt.Errorf("rpc: simulation stopped at t=%dms: %w", s.sched.Elapsed().Milliseconds(), err)
}

func (s *server) flush() error {
	if err := s.out.Flush(); err != nil {
		return fmt.Errorf("%w: %w", ErrOutput, err)
	}
	return nil
}

// at runs fn as a scheduler event now (see sim.RealTime.Do), then every
// other event due by then.
func (s *server) at(fn func()) error {
	if s.rt != nil {
		return s.rt.Do(fn)
	}
	now := s.sched.Elapsed()
	s.sched.At(now, fn)
	return s.sched.Advance(now)
}

// ---- events ----

// Record receives every trace record of the session as it is written
// (trace.Sink) and writes the ones that are RPC events, and the response
// of the command being run.
func (s *server) Record(r *trace.Record) {
	if r.Type == trace.Response {
		s.response(&r.Response)
		return
	}
	s.out.Write(s.ev.append(s.out.AvailableBuffer(), r))
}

// response writes the session's response for the command being run, in
// the protocol's form: the command's own id, and the prompt's number (the
// session core's count) as data. Only the first response of a command is written (the original
// answers a rejected prompt twice).
func (s *server) response(r *trace.ResponseRecord) {
	c := s.cmd
	if c == nil || c.silent || c.responded {
		return
	}
	c.responded = true
	if !r.Success {
		s.respondErr(c.id, c.hasID, r.Command, r.Error)
		return
	}
	var data []byte
	switch {
	case r.Command == "prompt":
		data = strconv.AppendInt(append(s.scratch[:0], `{"prompt":`...), int64(s.sess.State().Prompts), 10)
		data = append(data, '}')
		if v2 := s.ev.v2; v2 != nil {
			v2.promptIDs[s.sess.State().Prompts] = promptID{c.id, c.hasID}
		}
	case r.HasState:
		data = trace.AppendState(s.scratch[:0], &r.State)
	}
	s.scratch = data
	s.respondOK(c.id, c.hasID, r.Command, data)
}

// simulatedText is the text of a successful reply's one text block (the
// scenario scripts no text).
const simulatedText = "(simulated)"

// simulatedTool is the name of a toolUse reply's tool call.
const simulatedTool = "simulated_tool"

// eventWriter turns the session's trace records into the protocol's
// events. It keeps the messages of the run in flight, which agent_end
// carries; they are bounded by the scenario's turns, since a run ends once
// they have run out.
type eventWriter struct {
	withT         bool  // the virtual time first ("t")
	epochMs       int64 // the session clock's epoch: a message's timestamp is epochMs + t
	provider, api string
	// prompt is the text of the prompt being issued: the user message of
	// the run it starts.
	prompt string
	msgs   []byte // the run's messages, as JSON objects separated by commas
	msg    []byte // scratch: one assistant message
	// toolCalls counts the tool calls written (their ids).
	toolCalls int
	// v2 is the newer protocol's state (nil: protocol 1).
	v2 *protocol2
}

// protocol2 is what the newer protocol's events need besides the trace
// records: the prompt commands' ids (prompt_result's "id"), the errors'
// count (errorId), the run's start (duration) and how the prompt ended.
type protocol2 struct {
	promptIDs map[int]promptID // by prompt number, until resolved
	errors    int              // error replies (errorId)
	messages  int              // assistant message_end lines (messageId)
	runStart  time.Duration
	// the last assistant reply, which the prompt's result reports:
	// its stop reason and error message
	lastStop  policy.StopReason
	lastError string
	lastModel string
	// classifier says whether an error is retryable (prompt_result's
	// error.retryable)
	classifier *classify.Classifier
}

type promptID struct {
	id    string
	hasID bool
}

func newEventWriter(sc *scenario.Scenario, withT bool) eventWriter {
	return eventWriter{withT: withT, epochMs: sc.EpochMs, provider: sc.Provider, api: session.ProviderAPI(sc.Provider)}
}

// setPrompt sets the text of the prompt being issued.
func (w *eventWriter) setPrompt(text string) { w.prompt = text }

// append appends the RPC event line (with "\n") of a trace record, or
// nothing when the record is not an event of the protocol.
func (w *eventWriter) append(b []byte, r *trace.Record) []byte {
	switch r.Type {
	case trace.AgentRun, trace.AgentRunEnd, trace.MessageEnd, trace.AutoRetryStart, trace.AutoRetryEnd,
		trace.AutoCompactionStart, trace.AutoCompactionEnd, trace.PromptResolved, trace.RetryFallback:
	default:
		return b
	}
	b = append(b, '{')
	if w.withT {
		b = append(b, `"t":`...)
		b = trace.AppendMs(b, r.T)
		b = append(b, ',')
	}
	switch r.Type {
	case trace.AgentRun:
		w.startRun(r)
		b = append(b, `"type":"agent_start"}`...)
		if w.v2 != nil {
			w.v2.runStart = r.T
		}
	case trace.AgentRunEnd:
		b = append(b, `"type":"agent_end","messages":[`...)
		b = append(b, w.msgs...)
		b = append(b, ']')
		if w.v2 != nil {
			b = append(b, `,"isTerminal":true,"yielded":true`...)
		}
		b = append(b, '}')
		w.msgs = w.msgs[:0]
		if cap(w.msgs) > 1<<20 { // a long run's: let it go
			w.msgs = nil
		}
	case trace.PromptResolved:
		if w.v2 != nil {
			return w.appendPromptResult(b, r)
		}
		b = trace.AppendFields(b, r)
	case trace.AutoRetryStart:
		b = trace.AppendFields(b, r)
		if w.v2 != nil {
			// the agent's errorId is a number, the retried reply's (an
			// id: here the count of the session's error replies)
			b = append(b[:len(b)-1], `,"errorId":`...)
			b = strconv.AppendInt(b, int64(w.v2.errors), 10)
			b = append(b, '}')
		}
	case trace.MessageEnd:
		w.msg = w.appendAssistant(w.msg[:0], r)
		w.addMessage(w.msg)
		b = append(b, `"type":"message_end","message":`...)
		b = append(b, w.msg...)
		if r.Model != "" && w.v2 == nil { // (the newer agent's message_end has none)
			b = append(b, `,"model":`...)
			b = jsonw.AppendString(b, r.Model)
		}
		if w.v2 != nil {
			// the agent numbers the session's messages (an id)
			w.v2.messages++
			b = append(b, `,"messageId":"msg-`...)
			b = strconv.AppendInt(b, int64(w.v2.messages), 10)
			b = append(b, '"')
		}
		b = append(b, '}')
	default:
		b = trace.AppendFields(b, r)
	}
	return append(b, '\n')
}

// startRun starts a run's messages: a prompt's run starts with the
// prompt's user message.
func (w *eventWriter) startRun(r *trace.Record) {
	w.msgs = w.msgs[:0]
	if r.Run != trace.RunPrompt {
		return
	}
	w.msgs = append(w.msgs, `{"role":"user","content":[{"type":"text","text":`...)
	w.msgs = jsonw.AppendString(w.msgs, w.prompt)
	w.msgs = append(w.msgs, `}],"timestamp":`...)
	w.msgs = w.appendTimestamp(w.msgs, r)
	w.msgs = append(w.msgs, '}')
}

func (w *eventWriter) addMessage(m []byte) {
	if len(w.msgs) > 0 {
		w.msgs = append(w.msgs, ',')
	}
	w.msgs = append(w.msgs, m...)
}

// appendTimestamp appends a message's timestamp: the session clock's Unix
// milliseconds at r (whole milliseconds, as Date.now()).
func (w *eventWriter) appendTimestamp(b []byte, r *trace.Record) []byte {
	return strconv.AppendInt(b, w.epochMs+int64(r.T/time.Millisecond), 10)
}

// appendAssistant appends message_end's assistant message: the trace's
// fields (role, stopReason, errorMessage), then the rest of the original's
// AssistantMessage in its order (content: none for an error or an aborted
// reply, one toolCall block for a toolUse reply, one text block otherwise; api, provider, model; usage: the
// reply's input and cacheRead tokens, zero elsewhere; timestamp).
func (w *eventWriter) appendAssistant(b []byte, r *trace.Record) []byte {
	m := &r.Message
	b = append(b, `{"role":"assistant","stopReason":`...)
	b = jsonw.AppendString(b, string(m.StopReason))
	if m.ErrorMessage != "" {
		b = append(b, `,"errorMessage":`...)
		b = jsonw.AppendString(b, m.ErrorMessage)
	}
	switch m.StopReason {
	case policy.StopReasonError, policy.StopReasonAborted:
		b = append(b, `,"content":[]`...)
	case policy.StopReasonToolUse:
		// The tool call the reply asks for (the simulator's tools take no
		// time and return nothing): ids call_1, call_2, ... in order.
		w.toolCalls++
		b = append(b, `,"content":[{"type":"toolCall","id":"call_`...)
		b = strconv.AppendInt(b, int64(w.toolCalls), 10)
		b = append(b, `","name":"`+simulatedTool+`","arguments":{}}]`...)
	default:
		b = append(b, `,"content":[{"type":"text","text":"`+simulatedText+`"}]`...)
	}
	b = append(b, `,"api":`...)
	b = jsonw.AppendString(b, w.api)
	b = append(b, `,"provider":`...)
	b = jsonw.AppendString(b, w.provider)
	b = append(b, `,"model":`...)
	b = jsonw.AppendString(b, r.Model)
	b = append(b, `,"usage":{"input":`...)
	b = strconv.AppendInt(b, m.Input, 10)
	b = append(b, `,"output":0,"cacheRead":`...)
	b = strconv.AppendInt(b, m.CacheRead, 10)
	b = append(b, `,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"timestamp":`...)
	b = w.appendTimestamp(b, r)
	if v2 := w.v2; v2 != nil {
		// the newer protocol's: when the reply completed and how long
		// its run had taken by then (whole ms)
		if m.StopReason == policy.StopReasonError {
			v2.errors++
			b = append(b, `,"errorId":`...)
			b = strconv.AppendInt(b, int64(v2.errors), 10)
		}
		b = append(b, `,"completedAt":`...)
		b = w.appendTimestamp(b, r)
		b = append(b, `,"duration":`...)
		b = strconv.AppendInt(b, int64((r.T-v2.runStart)/time.Millisecond), 10)
		v2.lastStop, v2.lastError, v2.lastModel = m.StopReason, m.ErrorMessage, r.Model
	}
	return append(b, '}')
}

// appendPromptResult appends the newer protocol's prompt_result and
// session_settled lines for a resolved prompt, as the agent writes them:
// its command's id, then the status of its last assistant reply:
// completed, aborted, or error with the reply's error as an object
// (message, provider, model, retryable).
func (w *eventWriter) appendPromptResult(b []byte, r *trace.Record) []byte {
	v2 := w.v2
	b = append(b, `"type":"prompt_result"`...)
	if p, ok := v2.promptIDs[r.Prompt]; ok {
		delete(v2.promptIDs, r.Prompt)
		if p.hasID {
			b = append(b, `,"id":`...)
			b = jsonw.AppendString(b, p.id)
		}
	}
	b = append(b, `,"agentInvoked":true,"status":`...)
	switch v2.lastStop {
	case policy.StopReasonError:
		b = append(b, `"error","sessionSettled":true,"error":{"message":`...)
		msg := v2.lastError
		if msg == "" {
			msg = "Provider request failed" // the agent's, for an error without a message
		}
		b = jsonw.AppendString(b, msg)
		b = append(b, `,"provider":`...)
		b = jsonw.AppendString(b, w.provider)
		b = append(b, `,"model":`...)
		b = jsonw.AppendString(b, v2.lastModel)
		b = append(b, `,"retryable":`...)
		b = strconv.AppendBool(b, v2.classifier.Classify(policy.AssistantMessage{StopReason: policy.StopReasonError, ErrorMessage: v2.lastError}, 0) == classify.ClassRetryable)
		b = append(b, "}}"...)
	case policy.StopReasonAborted:
		b = append(b, `"aborted","sessionSettled":true}`...)
	default:
		b = append(b, `"completed","sessionSettled":true}`...)
	}
	b = append(b, "\n{"...)
	if w.withT {
		b = append(b, `"t":`...)
		b = trace.AppendMs(b, r.T)
		b = append(b, ',')
	}
	b = append(b, `"type":"session_settled"}`...)
	return append(b, '\n')
}

// ---- responses ----

func (s *server) respondHead(id string, hasID bool, command string) {
	b := s.out.AvailableBuffer()
	b = append(b, '{')
	if hasID {
		b = append(b, `"id":`...)
		b = jsonw.AppendString(b, id)
		b = append(b, ',')
	}
	b = append(b, `"type":"response","command":`...)
	b = jsonw.AppendString(b, command)
	s.out.Write(b)
}

func (s *server) respondOK(id string, hasID bool, command string, data []byte) {
	s.respondHead(id, hasID, command)
	s.out.WriteString(`,"success":true`)
	if data != nil {
		s.out.WriteString(`,"data":`)
		s.out.Write(data)
	}
	s.out.WriteString("}\n")
}

func (s *server) respondErr(id string, hasID bool, command, msg string) {
	s.respondHead(id, hasID, command)
	b := s.out.AvailableBuffer()
	b = append(b, `,"success":false,"error":`...)
	b = jsonw.AppendString(b, msg)
	b = append(b, "}\n"...)
	s.out.Write(b)
}
