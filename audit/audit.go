package audit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ohmypi/retryfsm/internal/lines"
	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/policy/classify"
	"github.com/ohmypi/retryfsm/trace"
)

// Rule names what a Finding is about. The names are stable identifiers (the
// CLI prints them and --json carries them); more may be added.
type Rule string

// The rules, in the order SPEC.md §16 describes them.
const (
	// ChainNotEnded: a chain (its first auto_retry_start) has no
	// auto_retry_end before the next prompt's run starts or by the end of
	// the log (SPEC §9 H1, H3, H7, H13). Reported at the chain's first
	// auto_retry_start.
	ChainNotEnded Rule = "chain-not-ended"
	// AttemptSequence: an auto_retry_start of an open chain whose attempt
	// is not the previous one's plus 1 (1 after a retry_fallback).
	AttemptSequence Rule = "attempt-sequence"
	// StaleCounter: a chain whose first auto_retry_start has an attempt
	// other than 1: the counter of an earlier chain was not reset (H2).
	StaleCounter Rule = "stale-counter"
	// StrayEnd: an auto_retry_end with no chain open that a policy cannot
	// give there: a success, or a failure after attempts other than the
	// fail-fast one (a spurious end from a stale counter, H8).
	StrayEnd Rule = "stray-end"
	// Delay: a delayMs that the profile's rule cannot give for that
	// attempt (0 is always allowed).
	Delay Rule = "delay"
	// OverflowRetried: a retried error that the profile classifies as a
	// context overflow, which is never retried.
	OverflowRetried Rule = "overflow-retried"
	// HintWindow: with timestamps, under a profile that honours hints, a
	// retried run started before the wait the provider asked for in the
	// error message had passed.
	HintWindow Rule = "hint-window"
	// BadJSON: a line that is not JSON (skipped).
	BadJSON Rule = "bad-json"
	// BadEvent: an event line whose fields have the wrong type or are
	// missing (skipped).
	BadEvent Rule = "bad-event"
	// LongLine: a line longer than MaxLineSize (skipped unread).
	LongLine Rule = "long-line"
	// CompactionContinueMissing: an auto_compaction_end with willRetry
	// true whose continue run never starts: none by the end of the log,
	// or the next prompt's run starts more than 100 ms (and a slack)
	// later (H19: the original rebuilt the context from the session
	// history and its continue was rejected). Reported at the
	// auto_compaction_end.
	CompactionContinueMissing Rule = "compaction-continue-missing"
)

// Rules lists every rule, in the order of their constants.
func Rules() []Rule {
	return []Rule{ChainNotEnded, AttemptSequence, StaleCounter, StrayEnd, Delay, OverflowRetried, HintWindow,
		BadJSON, BadEvent, LongLine, CompactionContinueMissing}
}

// MaxLineSize is the longest line read, in bytes, without its line
// terminator. A longer line is skipped unread (rule long-line): it bounds the
// memory an audit takes.
const MaxLineSize = 16 << 20

// Tolerances of the comparisons: a delayMs may differ from the backoff by
// rounding (the engine's waits are whole nanoseconds, an agent's may be any
// float); a log's times are whole milliseconds, read at slightly different
// moments.
const (
	delayToleranceMs = 0.001
	hintToleranceMs  = 1
	// continueSlackMs is how late a compaction's continue may start after
	// its 100 ms (a real agent's timer is late by its event loop).
	continueSlackMs = 50
)

// compactionContinueMs is the wait between a successful compaction and its
// continue (the original's and the engine's).
const compactionContinueMs = 100

// maxWhole bounds the whole numbers read (attempts), 2^53: every whole
// number up to it is exact in a float64.
const maxWhole = 1 << 53

// maxTimeMs bounds the times read, in milliseconds either side of 0 (about
// 31 700 years): a time outside is taken as no time.
const maxTimeMs = 1e15

// failFastPrefix starts the finalError of a chain that ends at once because
// the wait would exceed retryAfter.maxWaitMs (SPEC §1.1 step 6): an
// auto_retry_end with no auto_retry_start that a policy gives.
const failFastPrefix = "Provider requested "

// Options configure an Auditor.
type Options struct {
	// Profile names the profile whose settings the log is checked against
	// (policy.ProfileByName; "" is policy.DefaultProfile).
	Profile string
	// Policy, when not nil, is the policy to check against instead of the
	// profile's: for an agent run with settings of its own (typically the
	// profile's with the agent's merged over them, Settings.Apply, then
	// policy.Compile).
	Policy *policy.Policy
	// ContextWindow is the model's context window in tokens, for the usage
	// rule of the overflow check (input + cacheRead of the retried reply's
	// message_end over it); 0 checks the error message's patterns only.
	ContextWindow int64
}

// Finding is one problem of a log: its 1-based line, its rule and a
// one-line reason.
type Finding struct {
	Line   int    `json:"line"`
	Rule   Rule   `json:"rule"`
	Reason string `json:"reason"`
}

// String formats f as "LINE: rule: reason".
func (f Finding) String() string {
	return fmt.Sprintf("%d: %s: %s", f.Line, f.Rule, f.Reason)
}

// Summary counts what an audit read and found.
type Summary struct {
	Lines    int `json:"lines"`    // lines read (blank ones included)
	Events   int `json:"events"`   // lines of the protocol read: events and responses
	Skipped  int `json:"skipped"`  // other lines: blank, other JSON values, other types
	Bad      int `json:"bad"`      // lines reported bad-json, bad-event or long-line
	Chains   int `json:"chains"`   // chains started (first auto_retry_start)
	Retries  int `json:"retries"`  // auto_retry_start lines
	Findings int `json:"findings"` // findings reported, the bad lines included
	// Protocol is 2 when the log has a ready line: the newer protocol
	// (SPEC.md §10.1), whatever protocolVersion it announces (the agent's
	// says 1); 0 without, the first protocol.
	Protocol int `json:"protocol,omitempty"`
	// ProviderLayer says what the audit saw of the provider layer of a
	// profile that has one (policy.Profile.Layer): ProviderLayerNotVisible
	// for an RPC log alone, whose events come from the session layer only;
	// ProviderLayerChecked with the wire log beside it (AuditLayers); ""
	// for a profile without one.
	ProviderLayer string `json:"providerLayer,omitempty"`
}

// What an audit saw of a provider layer (Summary.ProviderLayer).
const (
	ProviderLayerNotVisible = "not visible"
	ProviderLayerChecked    = "checked"
)

// Add adds o's counts to s (the total of several logs).
func (s *Summary) Add(o Summary) {
	s.Lines += o.Lines
	s.Events += o.Events
	s.Skipped += o.Skipped
	s.Bad += o.Bad
	s.Chains += o.Chains
	s.Retries += o.Retries
	s.Findings += o.Findings
	s.Protocol = max(s.Protocol, o.Protocol)
	if s.ProviderLayer == "" || o.ProviderLayer == ProviderLayerNotVisible {
		s.ProviderLayer = o.ProviderLayer
	}
}

// An Auditor checks logs against one profile. It is not safe for
// concurrent use; Audit may be called again for the next log.
type Auditor struct {
	opt        Options
	profile    policy.Profile
	set        policy.Settings
	policy     string // "profile NAME", as the reasons name the policy
	classifier *classify.Classifier

	report func(Finding)
	sum    Summary
	st     state
	cur    []byte  // the line being read (readLine), for quoting its values
	runs   *runLog // the RPC log's runs, for AuditLayers (nil: not kept)
}

// New returns an Auditor for opt; an unknown profile or a negative context
// window is an error.
func New(opt Options) (*Auditor, error) {
	if opt.ContextWindow < 0 {
		return nil, fmt.Errorf("audit: context window %d is negative (allowed: 0 for none, or a number of tokens)", opt.ContextWindow)
	}
	p, err := policy.ProfileByName(opt.Profile)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	pol, name := opt.Policy, "the settings given over profile "+p.Name
	if pol == nil {
		if pol, err = p.Policy(); err != nil {
			return nil, fmt.Errorf("audit: profile %s: %w", p.Name, err)
		}
		name = "profile " + p.Name
	}
	return &Auditor{opt: opt, profile: p, set: pol.Settings().Normalized(), policy: name, classifier: pol.Classifier()}, nil
}

// Settings returns the settings the Auditor checks against.
func (a *Auditor) Settings() policy.Settings { return a.set.Clone() }

// Profile returns the profile the Auditor checks against.
func (a *Auditor) Profile() policy.Profile { return a.profile }

// Audit reads one log from r to its end and checks it, calling report (if
// not nil) with each finding as soon as it is known: a chain-not-ended
// finding, whose line is the chain's first auto_retry_start, comes when the
// next prompt's run starts or at the end of the log, so findings are not
// always in line order. The error is r's, with the line it stopped at; the
// summary then counts the lines read before it.
func (a *Auditor) Audit(r io.Reader, report func(Finding)) (Summary, error) {
	a.report, a.sum, a.st = report, Summary{}, state{}
	lr := lines.NewReader(r, MaxLineSize)
	for {
		line, tooLong, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			a.report = nil
			return a.sum, fmt.Errorf("audit: reading line %d: %w", a.sum.Lines+1, err)
		}
		a.sum.Lines++
		a.st.line = a.sum.Lines
		if tooLong {
			a.bad(LongLine, fmt.Sprintf("line longer than %d bytes, skipped unread", MaxLineSize))
			continue
		}
		a.readLine(line)
	}
	a.endOfLog()
	a.report = nil
	if a.profile.Layer != "" {
		a.sum.ProviderLayer = ProviderLayerNotVisible
	}
	return a.sum, nil
}

// state is what the audit keeps between lines: the open chain, the current
// run's last reply, the retry whose start time is checked against a hint and
// the last rejected prompt. Nothing grows with the log.
type state struct {
	line     int // the current line
	prevLine int // the previous non-blank line

	open          bool // a chain is open
	chainLine     int  // its first auto_retry_start
	lastAttempt   int  // the attempt of its last auto_retry_start
	lastStartLine int
	fallback      bool // a retry_fallback since: the next start is attempt 1
	awaitingRun   bool // no agent_start since its last auto_retry_start

	reply reply // the current run's last assistant message_end

	hint hintCheck // the retry waiting for its run to start

	promptLine int // an accepted prompt whose run has not started (0: none)

	// compaction is the latest auto_compaction_end with willRetry whose
	// continue run has not started (line 0: none).
	compaction struct {
		line int
		at   stamp
	}

	rejected struct { // the last prompt response with success false
		line  int
		id    string
		hasID bool
	}
}

// stamp is a line's time: "timestamp" (epoch ms) when present, else "t"
// (virtual ms).
type stamp struct {
	ms   float64
	kind stampKind
}

type stampKind uint8

const (
	noTime      stampKind = iota
	virtualTime           // "t"
	epochTime             // "timestamp"
)

// reply is an assistant message_end of the current run.
type reply struct {
	ok               bool
	line             int
	errorMessage     string
	input, cacheRead int64
	at               stamp
}

// hintCheck is a retry whose run must not start before deadline.
type hintCheck struct {
	ok        bool
	line      int // the auto_retry_start
	errAt     stamp
	deadline  float64
	hintMs    float64
	errorLine int
}

// ---- the lines ----

// head is what every line is first read for.
type head struct {
	Type jsontext.Value `json:"type"`
}

// times are the optional time fields of an event line.
type times struct {
	T         *float64 `json:"t"`
	Timestamp *float64 `json:"timestamp"`
}

func (t *times) stamp() stamp {
	switch {
	case t.Timestamp != nil:
		return newStamp(*t.Timestamp, epochTime)
	case t.T != nil:
		return newStamp(*t.T, virtualTime)
	}
	return stamp{}
}

func newStamp(ms float64, kind stampKind) stamp {
	if math.Abs(ms) > maxTimeMs {
		return stamp{}
	}
	return stamp{ms, kind}
}

type startLine struct {
	times
	Attempt      *float64 `json:"attempt"`
	DelayMs      *float64 `json:"delayMs"`
	ErrorMessage *string  `json:"errorMessage"`
}

type endLine struct {
	times
	Success    *bool    `json:"success"`
	Attempt    *float64 `json:"attempt"`
	FinalError *string  `json:"finalError"`
}

type messageEndLine struct {
	times
	Message *struct {
		Role         string `json:"role"`
		StopReason   string `json:"stopReason"`
		ErrorMessage string `json:"errorMessage"`
		Usage        *struct {
			Input     float64 `json:"input"`
			CacheRead float64 `json:"cacheRead"`
		} `json:"usage"`
	} `json:"message"`
}

// readyLine is the newer protocol's first line (SPEC.md §10.1).
type readyLine struct {
	times
	ProtocolVersion *float64 `json:"protocolVersion"`
}

// promptResultLine is the newer protocol's answer to a prompt once it is
// resolved (prompt_resolved's place).
type promptResultLine struct {
	times
	Status *string `json:"status"`
}

type compactionEndLine struct {
	times
	WillRetry *bool `json:"willRetry"`
}

type responseLine struct {
	times
	ID      jsontext.Value `json:"id"`
	Command *string        `json:"command"`
	Success *bool          `json:"success"`
}

// decodeOptions read JSON as an agent writes it: invalid UTF-8 (a lone
// surrogate escaped by JSON.stringify) is kept as U+FFFD rather than
// refused; duplicate names are still an error.
var decodeOptions = jsontext.AllowInvalidUTF8(true)

func (a *Auditor) readLine(line []byte) {
	if len(bytes.TrimSpace(line)) == 0 {
		a.sum.Skipped++
		return
	}
	st := &a.st
	a.cur = line
	defer func() { st.prevLine = st.line; a.cur = nil }()
	var h head
	if err := jsonv2.Unmarshal(line, &h, decodeOptions); err != nil {
		var se *jsontext.SyntacticError
		if errors.As(err, &se) {
			a.bad(BadJSON, "invalid JSON, skipped: "+strings.TrimPrefix(err.Error(), "jsontext: "))
			return
		}
		a.sum.Skipped++ // valid JSON, but not an object
		return
	}
	var typ string
	if h.Type.Kind() != '"' || jsonv2.Unmarshal(h.Type, &typ, decodeOptions) != nil {
		a.sum.Skipped++
		return
	}
	// The protocol's events share their names with the trace's lines (but
	// agent_start and agent_end, the trace's agent_run and agent_run_end).
	switch tt, _ := trace.ParseType(typ); {
	case tt == trace.AutoRetryStart:
		var e startLine
		if a.decode(line, typ, &e) {
			a.onStart(&e)
		}
	case tt == trace.AutoRetryEnd:
		var e endLine
		if a.decode(line, typ, &e) {
			a.onEnd(&e)
		}
	case tt == trace.MessageEnd:
		var e messageEndLine
		if a.decode(line, typ, &e) {
			a.onMessageEnd(&e)
		}
	case tt == trace.Response:
		var e responseLine
		if a.decode(line, typ, &e) {
			a.onResponse(&e)
		}
	case typ == rpcAgentStart:
		var e times
		if a.decode(line, typ, &e) {
			a.onAgentStart(e.stamp())
		}
	case tt == trace.RetryFallback:
		var e times
		if a.decode(line, typ, &e) {
			st.fallback = true
		}
	case tt == trace.AutoCompactionEnd:
		var e compactionEndLine
		if a.decode(line, typ, &e) && e.WillRetry != nil && *e.WillRetry {
			st.compaction.line, st.compaction.at = st.line, e.stamp()
		}
	case typ == rpcReady:
		// The newer protocol, whatever version it announces (the
		// agent's ready says protocolVersion 1, supporting 1 and 2).
		var e readyLine
		if a.decode(line, typ, &e) {
			if e.ProtocolVersion != nil {
				if _, ok := a.whole(typ, "protocolVersion", e.ProtocolVersion); !ok {
					break
				}
			}
			a.sum.Protocol = 2
		}
	case typ == rpcPromptResult:
		// resolves its prompt as prompt_resolved does; status says how
		var e promptResultLine
		if a.decode(line, typ, &e) && e.Status != nil && !slices.Contains(promptStatuses, *e.Status) {
			a.badEvent(typ, fmt.Sprintf("status = %q (allowed: %s)", *e.Status, strings.Join(promptStatuses, ", ")))
		}
	case typ == rpcAgentEnd:
		var e times
		if a.decode(line, typ, &e) && a.runs != nil {
			a.runs.end(e.stamp())
		}
	case tt == trace.AutoCompactionStart, tt == trace.PromptResolved, typ == rpcSessionSettled:
		var e times
		a.decode(line, typ, &e)
	default:
		a.sum.Skipped++
	}
}

// The RPC protocol's names of a run's start and end (SPEC §10), and the
// newer protocol's lines the audit reads (§10.1): its first line, and the
// two that resolve a prompt in prompt_resolved's place. Its other new
// events (turn_start, message_update, extension_ui_request, ...) are
// skipped.
const (
	rpcAgentStart     = "agent_start"
	rpcAgentEnd       = "agent_end"
	rpcReady          = "ready"
	rpcPromptResult   = "prompt_result"
	rpcSessionSettled = "session_settled"
)

// promptStatuses are prompt_result's statuses: the agent's (its last
// reply completed, aborted, or an error), and ok, retrysim's spelling of
// completed before it was measured.
var promptStatuses = []string{"completed", "error", "aborted", "ok"}

// decode reads an event line of type typ into v; a field of the wrong type
// is reported (bad-event) and the line skipped.
func (a *Auditor) decode(line []byte, typ string, v any) bool {
	if err := jsonv2.Unmarshal(line, v, decodeOptions); err != nil {
		a.bad(BadEvent, typ+": "+describeFieldError(err)+", skipped")
		return false
	}
	a.sum.Events++
	return true
}

// describeFieldError says which field of an event has the wrong type and
// what is allowed, e.g. `attempt is a string (allowed: a number)`.
func describeFieldError(err error) string {
	var se *jsonv2.SemanticError
	if !errors.As(err, &se) || se.GoType == nil || se.JSONPointer == "" {
		return strings.TrimPrefix(err.Error(), "json: ")
	}
	field := strings.ReplaceAll(strings.TrimPrefix(string(se.JSONPointer), "/"), "/", ".")
	var allowed string
	switch t := se.GoType; {
	case t.Kind() == reflect.Float64:
		allowed = "a number"
	case t.Kind() == reflect.Bool:
		allowed = "true or false"
	case t.Kind() == reflect.String:
		allowed = "a string"
	case t.Kind() == reflect.Struct || t.Kind() == reflect.Map || t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct:
		allowed = "an object"
	case t.Kind() == reflect.Slice:
		allowed = "an array"
	default:
		return strings.TrimPrefix(err.Error(), "json: ")
	}
	got := "a JSON " + se.JSONKind.String()
	switch se.JSONKind {
	case '{':
		got = "an object"
	case '[':
		got = "an array"
	case '0':
		got = "a number"
		if se.GoType.Kind() == reflect.Float64 {
			got = "the number " + string(se.JSONValue) + ", out of range"
		}
	case 't', 'f':
		got = se.JSONKind.String()
	}
	return field + " is " + got + " (allowed: " + allowed + ")"
}

// whole reports the value of a whole-number field, or reports it (bad-event)
// when it is missing or not a whole number.
func (a *Auditor) whole(typ, name string, v *float64) (int, bool) {
	switch {
	case v == nil:
		a.badEvent(typ, name+" is missing (allowed: a whole number)")
	case *v < 0 || *v != math.Trunc(*v) || *v > maxWhole:
		// Quote the number as the line writes it: a float64 rounds a
		// large one (9223372036854775807 would read 9223372036854776000).
		text := rawMember(a.cur, name)
		if text == "" {
			text = fmtMs(*v)
		}
		a.badEvent(typ, name+" = "+text+" is not a whole number from 0")
	default:
		return int(*v), true
	}
	return 0, false
}

// rawMember is the text of the top-level member name of the JSON object
// line, as written (at most 40 bytes of it), or "" when there is none.
func rawMember(line []byte, name string) string {
	dec := jsontext.NewDecoder(bytes.NewReader(line), decodeOptions)
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return ""
	}
	for dec.PeekKind() == '"' {
		key, err := dec.ReadToken()
		if err != nil {
			return ""
		}
		k := key.String() // (the token is void after the next read)
		v, err := dec.ReadValue()
		if err != nil {
			return ""
		}
		if k == name {
			if len(v) > 40 {
				return string(v[:40]) + "…"
			}
			return string(v)
		}
	}
	return ""
}

// badEvent reports an event line that cannot be checked; it was counted
// as an event, it now counts as bad.
func (a *Auditor) badEvent(typ, what string) {
	a.sum.Events--
	a.bad(BadEvent, typ+": "+what+", skipped")
}

func (a *Auditor) bad(rule Rule, reason string) {
	a.sum.Bad++
	a.find(a.st.line, rule, reason)
}

func (a *Auditor) find(line int, rule Rule, reason string) {
	a.sum.Findings++
	if a.report != nil {
		a.report(Finding{Line: line, Rule: rule, Reason: reason})
	}
}

// ---- the rules ----

func (a *Auditor) onAgentStart(at stamp) {
	st := &a.st
	a.compactionContinue(at)
	st.reply = reply{}
	retried := st.open && st.awaitingRun // this may be the retried run
	if a.runs != nil {
		attempt := 0
		if retried {
			attempt = st.lastAttempt
		}
		a.runs.start(st.line, at, attempt)
	}
	st.awaitingRun = false
	if st.promptLine != 0 {
		promptLine := st.promptLine
		st.promptLine = 0
		if retried {
			// A prompt accepted during the backoff: this run may be the
			// retried one, or the prompt's. The chain may still end; its
			// hint cannot be told apart.
			st.hint = hintCheck{}
			return
		}
		if st.open {
			a.find(st.chainLine, ChainNotEnded, fmt.Sprintf(
				"the chain that started here has no auto_retry_end before the run of the next prompt (accepted at line %d) started at line %d; its last attempt was %d (line %d)",
				promptLine, st.line, st.lastAttempt, st.lastStartLine))
			a.closeChain()
		}
	}
	if !st.hint.ok {
		return
	}
	h := st.hint
	st.hint = hintCheck{}
	if at.kind == noTime || at.kind != h.errAt.kind {
		return
	}
	if at.ms < h.deadline-hintToleranceMs {
		a.find(st.line, HintWindow, fmt.Sprintf(
			"the retried run started %s ms after the error (line %d), before the %s ms the provider asked for in it had passed (%s: retryAfter.use %s; retry at line %d)",
			fmtMs(at.ms-h.errAt.ms), h.errorLine, fmtMs(h.hintMs), a.policy, a.set.RetryAfter.Use, h.line))
	}
}

// compactionContinue checks the pending compaction's continue at a run's
// start: a run that is not a prompt's is the continue; a prompt's run that
// starts past the continue's time shows it missing (H19). A prompt's run
// before then leaves it unknown (the sound variant's prompt cancels the
// continue), and so does a log without times.
func (a *Auditor) compactionContinue(at stamp) {
	st := &a.st
	c := st.compaction
	if c.line == 0 {
		return
	}
	st.compaction.line = 0
	if st.promptLine == 0 || at.kind == noTime || at.kind != c.at.kind {
		return
	}
	if at.ms > c.at.ms+compactionContinueMs+continueSlackMs {
		a.find(c.line, CompactionContinueMissing, fmt.Sprintf(
			"the compaction's continue never started: the next run, prompt's at line %d, started %s ms later (the continue comes after %d ms)",
			st.promptLine, fmtMs(at.ms-c.at.ms), compactionContinueMs))
	}
}

func (a *Auditor) onMessageEnd(e *messageEndLine) {
	if e.Message == nil || e.Message.Role != "assistant" {
		return
	}
	r := reply{ok: true, line: a.st.line, errorMessage: e.Message.ErrorMessage, at: e.stamp()}
	if u := e.Message.Usage; u != nil {
		r.input, r.cacheRead = tokens(u.Input), tokens(u.CacheRead)
	}
	a.st.reply = r
	if a.runs != nil {
		a.runs.reply(a.st.line, e.Message.StopReason == "error" || e.Message.ErrorMessage != "", e.Message.StopReason == "aborted")
	}
}

func (a *Auditor) onResponse(e *responseLine) {
	st := &a.st
	if e.Command != nil && *e.Command == "abort" {
		st.compaction.line = 0 // the sound variant's abort cancels the continue
	}
	if e.Command == nil || *e.Command != "prompt" || e.Success == nil {
		return
	}
	id, hasID := "", false
	if e.ID.Kind() == '"' {
		hasID = jsonv2.Unmarshal(e.ID, &id, decodeOptions) == nil
	}
	if !*e.Success {
		st.rejected.line, st.rejected.id, st.rejected.hasID = st.line, id, hasID
		return
	}
	if st.rejected.line != 0 && st.rejected.line == st.prevLine && st.rejected.hasID == hasID && st.rejected.id == id {
		// The original answers a rejected prompt twice, false then true
		// (SPEC §9 H5): the second is no prompt.
		return
	}
	st.promptLine = st.line
}

func (a *Auditor) onEnd(e *endLine) {
	st := &a.st
	if e.Success == nil {
		a.badEvent(trace.AutoRetryEnd.String(), "success is missing (allowed: true or false)")
		return
	}
	attempt := 0
	if e.Attempt != nil {
		k, ok := a.whole(trace.AutoRetryEnd.String(), "attempt", e.Attempt)
		if !ok {
			return
		}
		attempt = k
	}
	if st.open {
		a.closeChain()
		return
	}
	st.hint = hintCheck{}
	st.fallback = false
	finalError := ""
	if e.FinalError != nil {
		finalError = *e.FinalError
	}
	switch {
	case *e.Success:
		a.find(st.line, StrayEnd, fmt.Sprintf(
			"auto_retry_end{success:true, attempt:%d} with no chain open: a success ends a chain that was never started or already ended (a stale counter)", attempt))
	case attempt > 0 && !strings.HasPrefix(finalError, failFastPrefix):
		a.find(st.line, StrayEnd, fmt.Sprintf(
			"auto_retry_end{success:false, attempt:%d} with no chain open: only maxRetries 0 (attempt 0) or a fail-fast (\"%s...\") ends a chain with no auto_retry_start (a stale counter)",
			attempt, failFastPrefix))
	}
}

func (a *Auditor) closeChain() {
	st := &a.st
	st.open, st.fallback, st.awaitingRun, st.hint = false, false, false, hintCheck{}
}

func (a *Auditor) endOfLog() {
	st := &a.st
	if c := st.compaction; c.line != 0 {
		a.find(c.line, CompactionContinueMissing, fmt.Sprintf(
			"the compaction's continue never started: no run after it by the end of the log (line %d)", st.line))
		st.compaction.line = 0
	}
	if st.open {
		a.find(st.chainLine, ChainNotEnded, fmt.Sprintf(
			"the chain that started here has no auto_retry_end by the end of the log (line %d); its last attempt was %d (line %d)",
			st.line, st.lastAttempt, st.lastStartLine))
		a.closeChain()
	}
}

func (a *Auditor) onStart(e *startLine) {
	st := &a.st
	typ := trace.AutoRetryStart.String()
	k, ok := a.whole(typ, "attempt", e.Attempt)
	if !ok {
		return
	}
	if e.DelayMs == nil {
		a.badEvent(typ, "delayMs is missing (allowed: a number of milliseconds)")
		return
	}
	a.sum.Retries++
	afterFallback := st.fallback
	if !st.open {
		a.sum.Chains++
		st.open, st.chainLine = true, st.line
		if k != 1 {
			a.find(st.line, StaleCounter, fmt.Sprintf(
				"a chain starts at attempt %d, not 1: the attempt counter of an earlier chain was not reset", k))
		}
	} else {
		want := st.lastAttempt + 1
		if afterFallback {
			want = 1
		}
		if k != want {
			why := fmt.Sprintf("attempt %d (line %d)", st.lastAttempt, st.lastStartLine)
			if afterFallback {
				why = "a retry_fallback, which restarts the count"
			}
			a.find(st.line, AttemptSequence, fmt.Sprintf("attempt %d follows %s; expected %d", k, why, want))
		}
	}
	st.lastAttempt, st.lastStartLine, st.fallback, st.awaitingRun = k, st.line, false, true

	delay := *e.DelayMs
	if ok, want := a.delayAllowed(k, delay); !ok {
		a.find(st.line, Delay, fmt.Sprintf("delayMs %s for attempt %d: %s waits %s", fmtMs(delay), k, a.policy, want))
	}

	msg := policy.AssistantMessage{StopReason: policy.StopReasonError}
	errAt := e.stamp()
	errorLine := st.line
	if st.reply.ok {
		msg.ErrorMessage = st.reply.errorMessage
		msg.InputTokens, msg.CacheReadTokens = st.reply.input, st.reply.cacheRead
		if st.reply.at.kind != noTime {
			errAt, errorLine = st.reply.at, st.reply.line
		}
	}
	if e.ErrorMessage != nil {
		msg.ErrorMessage = *e.ErrorMessage
	}
	now := time.UnixMilli(int64(errAt.ms))
	o := a.classifier.Reply(msg, a.opt.ContextWindow, now)
	if o.Class == classify.ClassOverflow {
		by := "its message"
		if !a.classifier.Reply(msg, 0, now).Overflow {
			by = fmt.Sprintf("its usage: input %d + cacheRead %d > context window %d", msg.InputTokens, msg.CacheReadTokens, a.opt.ContextWindow)
		}
		a.find(st.line, OverflowRetried, fmt.Sprintf(
			"the retried error is a context overflow by %s (%s); an overflow is never retried, it goes to compaction: %q",
			by, a.policy, msg.ErrorMessage))
	}

	st.hint = hintCheck{}
	if errAt.kind == noTime || !a.honoursHints() || !o.HasWaitHint || o.WaitHintMs <= 0 {
		return
	}
	if maxHint := msOf(a.set.RetryAfter.MaxHint); maxHint > 0 && o.WaitHintMs > maxHint {
		return // not used: the backoff stands
	}
	if delay == 0 && (o.UsageLimit || afterFallback) {
		return // a credential switch or another model: the hint was the old one's
	}
	if errAt.kind == virtualTime {
		// Virtual time has no date: a hint that depends on "now" (a date,
		// an epoch reset) cannot be placed on it.
		if later := a.classifier.Reply(msg, a.opt.ContextWindow, now.Add(time.Second)); later.WaitHintMs != o.WaitHintMs {
			return
		}
	}
	st.hint = hintCheck{ok: true, line: st.line, errAt: errAt, deadline: errAt.ms + o.WaitHintMs, hintMs: o.WaitHintMs, errorLine: errorLine}
}

// honoursHints reports whether the profile's wait reads the provider's hint.
func (a *Auditor) honoursHints() bool {
	return a.set.RetryAfter.Use == policy.HintFloor || a.set.RetryAfter.Use == policy.HintReplace
}

// delayAllowed reports whether the profile's rule can give delay (ms) for
// attempt k; want says what it gives. 0 is always allowed: a credential
// switch or a fallback leaves no other trace. The backoff's range is
// Settings.Backoff's over the draw u in [0,1); with hints (floor, replace)
// the log does not show the provider's headers, so only their bounds are
// checked.
func (a *Auditor) delayAllowed(k int, delay float64) (bool, string) {
	s := &a.set
	lo, hi := msOf(s.Backoff(k, 0)), msOf(s.Backoff(k, 1-1e-16))
	if lo > hi {
		lo, hi = hi, lo
	}
	maxWait := msOf(s.RetryAfter.MaxWait)
	maxHint := msOf(s.RetryAfter.MaxHint)
	backoff := fmtMs(lo)
	if hi-lo > delayToleranceMs {
		backoff = fmtMs(lo) + " to " + fmtMs(hi)
	}
	if s.Jittered() {
		backoff += fmt.Sprintf(" (jitter %s %s)", s.Jitter.Mode, fmtMs(s.Jitter.Ratio))
	}
	inBackoff := delay >= lo-delayToleranceMs && delay <= hi+delayToleranceMs
	underCeiling := maxWait == 0 || delay <= maxWait+delayToleranceMs
	ceiling := ""
	if maxWait > 0 {
		ceiling = ", at most " + fmtMs(maxWait) + " (maxWaitMs)"
	}
	var ok bool
	var want string
	switch s.RetryAfter.Use {
	case policy.HintFloor:
		// max(backoff, hint): at least the backoff; a hint over maxHintMs
		// is not used.
		ok = delay >= lo-delayToleranceMs && underCeiling && (maxHint == 0 || delay <= max(hi, maxHint)+delayToleranceMs)
		want = "at least " + fmtMs(lo) + " (its backoff " + backoff + ", raised by a hint"
		if maxHint > 0 {
			want += " of at most " + fmtMs(maxHint) + " (maxHintMs)"
		}
		want += ")" + ceiling
	case policy.HintReplace:
		ok = underCeiling && (inBackoff || maxHint == 0 || delay <= maxHint+delayToleranceMs)
		want = backoff + " (its backoff) or the provider's hint"
		if maxHint > 0 {
			want += " of at most " + fmtMs(maxHint) + " (maxHintMs)"
		}
		want += ceiling
	default:
		ok = inBackoff && underCeiling
		want = backoff + ceiling
	}
	if delay == 0 {
		return true, want
	}
	return ok && delay > 0, want + ", or 0 (a credential switch, a fallback)"
}

// tokens is a token count read as a JSON number: 0 for a negative one,
// the largest int64 for one beyond it.
func tokens(f float64) int64 {
	switch {
	case !(f > 0):
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	}
	return int64(f)
}

// msOf is d in milliseconds, fraction kept.
func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// fmtMs formats a number of milliseconds as the log writes it.
func fmtMs(ms float64) string { return strconv.FormatFloat(ms, 'f', -1, 64) }
