package proxy

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/ohmypi/retryfsm/fleet"
	"github.com/ohmypi/retryfsm/internal/suggest"
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

var faultKinds = []string{string(FaultLatency), string(FaultSlowBody), string(FaultStreamCut), string(FaultSSEError), string(FaultDrop)}

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
	Fleet *fleet.Config
}

// Validate checks the faults.
func (s Script) Validate() error {
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

// LoadScript reads a script: a scenario file (one with "turns"; its turns
// are the answers), or a proxy script file of the keys scenario (a
// scenario file's path, relative to the script), fleet (a fleet file's
// path: its provider is the fault model), repeat, text and faults
// ([{request, kind, delayMs, events, chunk}]). Errors name file:line:col,
// the key and what is allowed.
func LoadScript(path string) (Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Script{}, err
	}
	if len(data) > 1<<20 {
		return Script{}, fmt.Errorf("%s: over 1 MiB", path)
	}
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		// The scenario loader gives the exact position of a syntax error.
		if _, serr := scenario.Parse(path, data); serr != nil {
			return Script{}, serr
		}
		return Script{}, fmt.Errorf("%s: %v", path, err)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return Script{}, fmt.Errorf("%s:1:1: a script is a mapping (a scenario file, or the keys %s)", path, strings.Join(scriptKeys, ", "))
	}
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "turns" {
			sc, err := scenario.Parse(path, data)
			if err != nil {
				return Script{}, err
			}
			return Script{Turns: sc.Turns}, nil
		}
	}
	var s Script
	at := func(n *yaml.Node) string { return fmt.Sprintf("%s:%d:%d", path, n.Line, n.Column) }
	seen := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if seen[k.Value] {
			return Script{}, fmt.Errorf("%s: %s: duplicate key", at(k), k.Value)
		}
		seen[k.Value] = true
		switch k.Value {
		case "scenario":
			p, err := filePath(v, path, "scenario", "a scenario file's path", at)
			if err != nil {
				return Script{}, err
			}
			sc, err := scenario.Load(p)
			if err != nil {
				return Script{}, fmt.Errorf("%s: scenario: %w", at(v), err)
			}
			s.Turns = sc.Turns
		case "fleet":
			p, err := filePath(v, path, "fleet", "a fleet file's path", at)
			if err != nil {
				return Script{}, err
			}
			spec, err := fleet.Load(p)
			if err != nil {
				return Script{}, fmt.Errorf("%s: fleet: %w", at(v), err)
			}
			cfg := spec.Config
			s.Fleet = &cfg
		case "repeat":
			if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" {
				return Script{}, fmt.Errorf("%s: repeat: %q is not true or false", at(v), v.Value)
			}
			s.Repeat = v.Value == "true"
		case "text":
			if v.Kind != yaml.ScalarNode || v.Tag != "!!str" {
				return Script{}, fmt.Errorf("%s: text: not a string", at(v))
			}
			s.Text = v.Value
		case "faults":
			if v.Kind != yaml.SequenceNode {
				return Script{}, fmt.Errorf("%s: faults: not a list (allowed: [{request, kind, delayMs, events, chunk}])", at(v))
			}
			for j, fn := range v.Content {
				f, err := parseFault(fn, fmt.Sprintf("faults[%d]", j), at)
				if err != nil {
					return Script{}, err
				}
				s.Faults = append(s.Faults, f)
			}
		default:
			return Script{}, fmt.Errorf("%s: unknown key %q (allowed: %s)%s", at(k), k.Value, strings.Join(scriptKeys, ", "), didYouMean(k.Value, scriptKeys))
		}
	}
	if err := s.Validate(); err != nil {
		return Script{}, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

func didYouMean(name string, allowed []string) string { return suggest.Key(name, allowed) }

func parseFault(n *yaml.Node, where string, at func(*yaml.Node) string) (Fault, error) {
	if n.Kind != yaml.MappingNode {
		return Fault{}, fmt.Errorf("%s: %s: not a mapping (allowed keys: %s)", at(n), where, strings.Join(faultKeys, ", "))
	}
	var f Fault
	hasKind := false
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		integer := func(max int64) (int64, error) {
			x, err := strconv.ParseInt(v.Value, 0, 64)
			if v.Kind != yaml.ScalarNode || v.Tag != "!!int" || err != nil || x < 0 || x > max {
				return 0, fmt.Errorf("%s: %s.%s: %q is not allowed (allowed: an integer from 0 to %d)", at(v), where, k.Value, v.Value, max)
			}
			return x, nil
		}
		var err error
		var x int64
		switch k.Value {
		case "kind":
			if v.Kind != yaml.ScalarNode || !isFaultKind(FaultKind(v.Value)) {
				return Fault{}, fmt.Errorf("%s: %s.kind: %q is not a fault (allowed: %s)%s", at(v), where, v.Value, strings.Join(faultKinds, ", "), didYouMean(v.Value, faultKinds))
			}
			f.Kind, hasKind = FaultKind(v.Value), true
		case "request":
			x, err = integer(1 << 40)
			f.Request = int(x)
		case "delayMs":
			x, err = integer(3_600_000)
			f.Delay = time.Duration(x) * time.Millisecond
		case "events":
			x, err = integer(1 << 20)
			f.Events = int(x)
		case "chunk":
			x, err = integer(1 << 20)
			f.Chunk = int(x)
		default:
			return Fault{}, fmt.Errorf("%s: %s: unknown key %q (allowed: %s)%s", at(k), where, k.Value, strings.Join(faultKeys, ", "), didYouMean(k.Value, faultKeys))
		}
		if err != nil {
			return Fault{}, err
		}
	}
	if !hasKind {
		return Fault{}, fmt.Errorf("%s: %s: kind is required (allowed: %s)", at(n), where, strings.Join(faultKinds, ", "))
	}
	return f, nil
}

// filePath reads the value v of key in the script at path as a file's
// path, relative to the script's folder unless absolute; allowed says
// what the key takes, at where a node is.
func filePath(v *yaml.Node, path, key, allowed string, at func(*yaml.Node) string) (string, error) {
	if v.Kind != yaml.ScalarNode || v.Tag != "!!str" {
		return "", fmt.Errorf("%s: %s: not a string (allowed: %s)", at(v), key, allowed)
	}
	if filepath.IsAbs(v.Value) {
		return v.Value, nil
	}
	return filepath.Join(filepath.Dir(path), v.Value), nil
}
