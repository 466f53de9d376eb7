package proxy

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/ohmypi/retryfsm/fleet/fleetspec"
	"github.com/ohmypi/retryfsm/internal/strictfile"
	"github.com/ohmypi/retryfsm/internal/suggest"
	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/scenario"
	"github.com/ohmypi/retryfsm/wire"
)

// FaultKind is a fault of the wire (SPEC.md §18.2; wire.FaultKind).
type FaultKind = wire.FaultKind

// The wire's faults (wire.FaultLatency ...).
const (
	FaultLatency   = wire.FaultLatency
	FaultSlowBody  = wire.FaultSlowBody
	FaultStreamCut = wire.FaultStreamCut
	FaultSSEError  = wire.FaultSSEError
	FaultDrop      = wire.FaultDrop
)

// DefaultSlowChunk is a slow body's piece when Fault.Chunk is 0.
const DefaultSlowChunk = 64

// faultKinds are wire.FaultKinds' names.
var faultKinds = func() []string {
	names := make([]string, len(wire.FaultKinds))
	for i, k := range wire.FaultKinds {
		names[i] = string(k)
	}
	return names
}()

// Fault is a wire fault applied to one request, or to every request.
type Fault struct {
	// Request is the number of the request it applies to, counted from 1
	// in arrival order; 0 applies it to every request.
	Request int
	// Kind is the fault.
	Kind FaultKind
	// Delay is the latency's wait, or the slow body's pause.
	Delay time.Duration
	// Events is the number of events sent before a stream cut or an
	// error event.
	Events int
	// Chunk is a slow JSON body's piece in bytes (0: DefaultSlowChunk).
	Chunk int
}

// String is the fault as the wire log names it: "latency 200ms",
// "stream-cut after 3 events".
func (f Fault) String() string {
	switch f.Kind {
	case FaultLatency, FaultSlowBody:
		return fmt.Sprintf("%s %s", f.Kind, f.Delay)
	case FaultStreamCut, FaultSSEError:
		return fmt.Sprintf("%s after %d events", f.Kind, f.Events)
	}
	return string(f.Kind)
}

// Script says how the proxy answers each request: request n (from 1)
// gets Turns[n-1] (with Repeat, Turns[(n-1) mod len]); an error turn is
// the provider's HTTP error (its status, headers and message), a stop,
// toolUse or length turn a valid answer (text, a tool call, cut by the
// token limit), an aborted turn a dropped connection. A request with no
// turn left is answered by the upstream, or else with a canned text.
type Script struct {
	// Turns are the answers in order (a scenario file's turns).
	Turns []scenario.Turn
	// Repeat starts the turns again after the last.
	Repeat bool
	// Faults are the wire faults, by request number.
	Faults []Fault
	// Text is the canned answer's text ("": DefaultText).
	Text string
	// Fleet, when not nil, is the fault model that answers the requests
	// with no turn: the fleet's provider (its capacity, outage windows,
	// background error rates and retry-after hints, SPEC.md §15.2) on the
	// real clock, the time since the proxy started.
	Fleet *fleetspec.Config
}

// Validate checks the turns (checkTurns) and the faults.
func (s Script) Validate() error {
	if err := checkTurns(s.Turns); err != nil {
		return err
	}
	return s.validateFaults()
}

// framingHeaders are the headers the proxy writes itself, which a turn
// may not set: its own would cut or double the answer's framing.
var framingHeaders = []string{"content-length", "transfer-encoding", "connection"}

// checkTurns checks that HTTP can carry each turn as the proxy writes it:
// header values of printable text and tabs (a CR or LF would split the
// header), no framing header, and an error turn's status one with a body.
// An error is a *scenario.Error at the turn's position.
func checkTurns(turns []scenario.Turn) error {
	for i := range turns {
		t := &turns[i]
		fail := func(field, format string, a ...any) error {
			return &scenario.Error{Pos: t.Pos, Field: fmt.Sprintf("turns[%d].%s", i, field), Msg: fmt.Sprintf(format, a...)}
		}
		names := make([]string, 0, len(t.Headers))
		for k := range t.Headers {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			if slices.Contains(framingHeaders, strings.ToLower(k)) {
				return fail("headers."+k, "the proxy frames the answer itself (not allowed: %s)", strings.Join(framingHeaders, ", "))
			}
			if strings.IndexFunc(t.Headers[k], func(r rune) bool { return (r < 0x20 && r != '\t') || r == 0x7f }) >= 0 {
				return fail("headers."+k, "%s has a control character (allowed: printable text and tabs)", strconv.Quote(strictfile.Clip(t.Headers[k])))
			}
		}
		if st := t.Status; t.StopReason == policy.StopReasonError && (st != 0 && st < 200 || st == 204 || st == 304) {
			return fail("status", "%d has no body (allowed for an error turn: 200 to 599 but 204 and 304)", st)
		}
	}
	return nil
}

// validateFaults checks the faults.
func (s Script) validateFaults() error {
	for i, f := range s.Faults {
		where := fmt.Sprintf("faults[%d]", i)
		switch {
		case !isFaultKind(f.Kind):
			return fmt.Errorf("%s.kind: %q is not a fault (allowed: %s)", where, f.Kind, strings.Join(faultKinds, ", "))
		case f.Request < 0:
			return fmt.Errorf("%s.request: %d is out of range (allowed: 0 for every request, or a request number from 1)", where, f.Request)
		case f.Delay < 0 || f.Delay > time.Hour:
			return fmt.Errorf("%s.delayMs: %s is out of range (allowed: 0 to 3600000)", where, f.Delay)
		case f.Events < 0:
			return fmt.Errorf("%s.events: %d is out of range (allowed: an integer from 0)", where, f.Events)
		case f.Chunk < 0:
			return fmt.Errorf("%s.chunk: %d is out of range (allowed: an integer from 0)", where, f.Chunk)
		}
	}
	return nil
}

func isFaultKind(k FaultKind) bool {
	for _, n := range faultKinds {
		if string(k) == n {
			return true
		}
	}
	return false
}

// turn returns request seq's turn and its number (from 1), or nil, 0.
func (s *Script) turn(seq int) (*scenario.Turn, int) {
	n := len(s.Turns)
	if n == 0 {
		return nil, 0
	}
	i := seq - 1
	if s.Repeat {
		i %= n
	}
	if i >= n {
		return nil, 0
	}
	return &s.Turns[i], i + 1
}

// faultsFor returns the faults of request seq.
func (s *Script) faultsFor(seq int) []Fault {
	var out []Fault
	for _, f := range s.Faults {
		if f.Request == 0 || f.Request == seq {
			out = append(out, f)
		}
	}
	return out
}

// scriptKeys are a proxy script file's keys.
var scriptKeys = []string{"scenario", "fleet", "repeat", "text", "faults"}

// faultKeys are a fault's keys.
var faultKeys = []string{"request", "kind", "delayMs", "events", "chunk"}

// maxScriptSize is the largest script file read, in bytes.
const maxScriptSize = 1 << 20

// LoadScript reads a script: a scenario file (one with "turns"; its turns
// are the answers), or a proxy script file of the keys scenario (a
// scenario file's path, relative to the script), fleet (a fleet file's
// path: its provider is the fault model), repeat, text and faults
// ([{request, kind, delayMs, events, chunk}]). It is read by the one
// strict reader of scenario and fleet files (internal/strictfile): YAML,
// or JSON (a name ending in ".json", or valid JSON), one document, no
// aliases, merge keys or duplicate keys. Errors name file:line:col, the
// key path (faults[1].delayMs) and what is allowed.
func LoadScript(path string) (Script, error) {
	p := &scriptParser{strictfile.Reader{File: path, What: "proxy script", UnknownAtMapping: true,
		Top: "a script is a mapping (a scenario file, or the keys " + strings.Join(scriptKeys, ", ") + ")"}}
	var s Script
	var data []byte
	scenarioFile := false
	if err := p.Read(func() {
		data = p.readFile()
		root := p.Decode(data)
		for i := 0; i+1 < len(root.Content); i += 2 {
			if k := root.Content[i]; k.Kind == yaml.ScalarNode && k.Value == "turns" {
				scenarioFile = true
				return
			}
		}
		s = p.script(root)
	}); err != nil {
		return Script{}, err
	}
	if scenarioFile {
		sc, err := scenario.Parse(path, data)
		if err != nil {
			return Script{}, err
		}
		if err := checkTurns(sc.Turns); err != nil {
			return Script{}, err
		}
		return Script{Turns: sc.Turns}, nil
	}
	if err := checkTurns(s.Turns); err != nil {
		return Script{}, err
	}
	if err := s.validateFaults(); err != nil {
		return Script{}, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// scriptParser reads a proxy script with the one strict reader.
type scriptParser struct{ strictfile.Reader }

// readFile reads the script, at most maxScriptSize bytes.
func (p *scriptParser) readFile() []byte {
	at := strictfile.Pos{File: p.File}
	data, tooLarge, err := strictfile.ReadFile(p.File, maxScriptSize)
	if err != nil {
		p.FailErr(at, "", err.Error(), err)
	}
	if tooLarge {
		p.FailPos(at, "", fmt.Sprintf("file too large (at most %d bytes)", maxScriptSize))
	}
	return data
}

// script reads a proxy script file's keys.
func (p *scriptParser) script(root *yaml.Node) Script {
	var s Script
	p.Mapping(root, "", scriptKeys, func(e strictfile.Entry) {
		key, v := e.Key, e.V
		switch key {
		case "scenario":
			sc, err := scenario.Load(p.filePath(v, key, "a scenario file's path"))
			if err != nil {
				p.FailErr(p.Pos(v), key, err.Error(), err)
			}
			s.Turns = sc.Turns
		case "fleet":
			spec, err := fleetspec.Load(p.filePath(v, key, "a fleet file's path"))
			if err != nil {
				p.FailErr(p.Pos(v), key, err.Error(), err)
			}
			cfg := spec.Config
			s.Fleet = &cfg
		case "repeat":
			if v.Kind == yaml.ScalarNode && v.ShortTag() != "!!bool" {
				p.Fail(v, key, "%q is not true or false", strictfile.Clip(v.Value))
			}
			s.Repeat = p.Boolean(v, key)
		case "text":
			s.Text = p.Str(v, key)
		case "faults":
			if v.Kind != yaml.SequenceNode {
				p.Fail(v, key, "not a list (allowed: [{%s}]), got %s", strings.Join(faultKeys, ", "), strictfile.Describe(v))
			}
			for i, n := range v.Content {
				s.Faults = append(s.Faults, p.fault(n, strictfile.Index(key, i)))
			}
		}
	})
	return s
}

// fault reads the fault n at key path path.
func (p *scriptParser) fault(n *yaml.Node, path string) Fault {
	var f Fault
	fields := p.Mapping(n, path, faultKeys, func(e strictfile.Entry) {
		fp := strictfile.Join(path, e.Key)
		switch e.Key {
		case "kind":
			k := p.Scalar(e.V, fp)
			if !isFaultKind(FaultKind(k)) {
				p.Fail(e.V, fp, "%q is not a fault (allowed: %s)%s", strictfile.Clip(k), strings.Join(faultKinds, ", "), suggest.Key(k, faultKinds))
			}
			f.Kind = FaultKind(k)
		case "request":
			f.Request = int(p.integer(e.V, fp, 1<<40))
		case "delayMs":
			f.Delay = time.Duration(p.integer(e.V, fp, 3_600_000)) * time.Millisecond
		case "events":
			f.Events = int(p.integer(e.V, fp, 1<<20))
		case "chunk":
			f.Chunk = int(p.integer(e.V, fp, 1<<20))
		}
	})
	if _, ok := fields["kind"]; !ok {
		p.Fail(n, path, "kind is required (allowed: %s)", strings.Join(faultKinds, ", "))
	}
	return f
}

// integer is an integer from 0 to max; one out of range is quoted as
// written.
func (p *scriptParser) integer(n *yaml.Node, path string, max int64) int64 {
	want := fmt.Sprintf("an integer from 0 to %d", max)
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!int" {
		var x int64
		if err := n.Decode(&x); err != nil || x < 0 || x > max {
			p.Fail(n, path, "%q is not allowed (allowed: %s)", strictfile.Clip(n.Value), want)
		}
		return x
	}
	return p.Integer(n, path, 0, max, want)
}

// filePath reads the value v of key as a file's path, relative to the
// script's folder unless absolute; allowed says what the key takes.
func (p *scriptParser) filePath(v *yaml.Node, key, allowed string) string {
	if v.Kind != yaml.ScalarNode || !strictfile.IsString(v) {
		p.Fail(v, key, "expected %s, got %s", allowed, strictfile.Describe(v))
	}
	if strings.TrimSpace(v.Value) == "" {
		p.Fail(v, key, "empty (allowed: %s, relative to the script)", allowed)
	}
	if filepath.IsAbs(v.Value) {
		return v.Value
	}
	return filepath.Join(filepath.Dir(p.File), v.Value)
}
