package scenario

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"gopkg.in/yaml.v3"

	"github.com/ohmypi/retryfsm/internal/strictfile"

	"github.com/ohmypi/retryfsm/trace"
)

// ExpectTypes are the types of the trace lines that ExpectFromTrace lists:
// the runs, the retry chains and the prompts.
func ExpectTypes() []trace.Type {
	return []trace.Type{trace.AgentRun, trace.AutoRetryStart, trace.AutoRetryEnd, trace.PromptResolved}
}

// ExpectFromTrace returns the expect block that pins a run down: every
// agent_run, auto_retry_start, auto_retry_end and prompt_resolved line of
// records (ExpectTypes), in order, with all its fields as the trace writes
// them ("t" included), and the final line's state, attempt, isRetrying
// and unresolvedPrompts. records are a whole run's (sim.Result.Records):
// without a final line (a simulation that did not finish) it is an error.
func ExpectFromTrace(records []trace.Record) (*Expect, error) {
	x := &Expect{Events: []ExpectEvent{}}
	var line []byte
	for i := range records {
		r := &records[i]
		switch r.Type {
		case trace.AgentRun, trace.AutoRetryStart, trace.AutoRetryEnd, trace.PromptResolved:
			line = trace.AppendJSON(line[:0], r)
			ev, err := eventFromJSON(line)
			if err != nil {
				return nil, fmt.Errorf("trace line %d: %w", i+1, err)
			}
			x.Events = append(x.Events, ev)
		case trace.Final:
			f := r.Final
			state, attempt, retrying := string(f.State), f.Attempt, f.IsRetrying
			x.Final = &ExpectFinal{State: &state, Attempt: &attempt, IsRetrying: &retrying,
				UnresolvedPrompts: append([]int{}, f.UnresolvedPrompts...), HasUnresolved: true}
		}
	}
	if x.Final == nil {
		return nil, errors.New("the trace has no final line (the simulation did not finish)")
	}
	return x, nil
}

// eventFromJSON reads one trace line into an expected event: every field,
// in the line's order, its value as encoding/json reads it.
func eventFromJSON(line []byte) (ExpectEvent, error) {
	ev := ExpectEvent{Fields: map[string]any{}}
	dec := jsontext.NewDecoder(bytes.NewReader(line))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return ev, fmt.Errorf("not a JSON object: %s", line)
	}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return ev, err
		}
		name := tok.String() // before the token is voided by the next read
		raw, err := dec.ReadValue()
		if err != nil {
			return ev, err
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return ev, err
		}
		ev.Keys = append(ev.Keys, name)
		ev.Fields[name] = v
	}
	return ev, nil
}

// SetExpect returns data, the scenario file name, with its expect block
// replaced by x, or with x added after its other keys when it has none.
// Every other byte of the file stays as it is, comments and layout
// included:
//
//   - YAML: the text from the line of the top-level "expect" key to the
//     next top-level key is replaced (the blank and comment lines just
//     before that key, not indented more than "expect", stay: they are
//     the next key's); the block is written as Format writes it, each
//     event one flow mapping. The top-level mapping must be in block style
//     (an error otherwise: a flow mapping's layout cannot be kept).
//   - JSON (a name ending in ".json", or data that is valid JSON): the
//     value of the "expect" member is replaced, its other members keep
//     their bytes and their order; the block is indented as the members
//     are, each event on a line of its own.
//
// The file is located with the YAML library's node positions (yaml.v3's
// Node API) or the JSON tokenizer's offsets; data should be a file Parse
// accepts.
func SetExpect(name string, data []byte, x *Expect) ([]byte, error) {
	if x == nil {
		return nil, errors.New("no expect block to write")
	}
	isJSON := strictfile.IsJSONName(name) || json.Valid(data)
	var out []byte
	var err error
	if isJSON {
		out, err = setExpectJSON(data, x)
	} else {
		out, err = setExpectYAML(data, x)
	}
	if err != nil {
		return nil, err
	}
	// A layout the edit did not foresee (a plain scalar continued on a
	// line less indented than its key, ...) must not turn into another
	// scenario: the other keys must read back as they were.
	if err := sameButExpect(isJSON, data, out); err != nil {
		return nil, fmt.Errorf("cannot place the expect block in this file's layout (%v); move expect to the end of the file, in block style, and try again", err)
	}
	return out, nil
}

// topMember is a top-level key of a scenario file and its value: the JSON
// text, or the YAML value decoded.
type topMember struct {
	key string
	raw []byte
	v   any
}

// topMembers reads the top-level keys of data, in order.
func topMembers(isJSON bool, data []byte) ([]topMember, error) {
	var ms []topMember
	if isJSON {
		dec := jsontext.NewDecoder(bytes.NewReader(bytes.TrimPrefix(data, []byte("\ufeff"))))
		if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
			return nil, errors.New("not a JSON object")
		}
		for dec.PeekKind() != '}' {
			tok, err := dec.ReadToken()
			if err != nil {
				return nil, err
			}
			key := tok.String()
			raw, err := dec.ReadValue()
			if err != nil {
				return nil, err
			}
			ms = append(ms, topMember{key: key, raw: bytes.Clone(raw)})
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
		if _, err := dec.ReadToken(); err != io.EOF {
			return nil, errors.New("text after the JSON object")
		}
		return ms, nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	if err := dec.Decode(new(yaml.Node)); err != io.EOF {
		return nil, errors.New("not one YAML document")
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("not a mapping")
	}
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		var v any
		if err := root.Content[i+1].Decode(&v); err != nil {
			return nil, err
		}
		ms = append(ms, topMember{key: root.Content[i].Value, v: v})
	}
	return ms, nil
}

// sameButExpect checks that after has the top-level keys of before, in
// the same order, with the same values, but for an expect key (which
// after must have).
func sameButExpect(isJSON bool, before, after []byte) error {
	a, err := topMembers(isJSON, before)
	if err != nil {
		return err
	}
	b, err := topMembers(isJSON, after)
	if err != nil {
		return fmt.Errorf("the result does not read back: %v", err)
	}
	strip := func(ms []topMember) (rest []topMember, expects int) {
		for _, m := range ms {
			if m.key == "expect" {
				expects++
			} else {
				rest = append(rest, m)
			}
		}
		return rest, expects
	}
	a, _ = strip(a)
	b, n := strip(b)
	if n != 1 || len(a) != len(b) {
		return errors.New("the result's keys differ")
	}
	for i := range a {
		if a[i].key != b[i].key || !bytes.Equal(a[i].raw, b[i].raw) || !reflect.DeepEqual(a[i].v, b[i].v) {
			return fmt.Errorf("the result's %s differs", a[i].key)
		}
	}
	return nil
}

// lineStarts returns the byte offset of the start of each line of data
// (lineStarts[i] is line i+1's); a last entry is len(data).
func lineStarts(data []byte) []int {
	starts := []int{0}
	for i, c := range data {
		if c == '\n' && i+1 < len(data) {
			starts = append(starts, i+1)
		}
	}
	return append(starts, len(data))
}

// trailingKeep reports whether a line (without its newline) belongs to
// what follows a block rather than to the block: a blank line, a comment
// not indented more than col-1 spaces, or a document end marker.
func trailingKeep(line []byte, col int) bool {
	trimmed := bytes.TrimRight(line, " \t\r")
	body := bytes.TrimLeft(trimmed, " ")
	indent := len(trimmed) - len(body)
	switch {
	case len(body) == 0:
		return true
	case body[0] == '#':
		return indent <= col-1
	case indent == 0 && (bytes.Equal(body, []byte("...")) || bytes.HasPrefix(body, []byte("... "))):
		return true
	}
	return false
}

func setExpectYAML(data []byte, x *Expect) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("the file is not one mapping of scenario keys")
	}
	root := doc.Content[0]
	if root.Style&yaml.FlowStyle != 0 {
		return nil, errors.New("the top-level mapping is written in flow style ({...}), whose layout an edit cannot keep; write it in block style (one key: value per line) to update it")
	}
	// Lines are counted at "\n" here; YAML also breaks lines at a lone
	// "\r", which would put the library's line numbers off ours.
	if bytes.Count(data, []byte("\r")) != bytes.Count(data, []byte("\r\n")) {
		return nil, errors.New("the file breaks lines with a lone carriage return (\\r); use \\n or \\r\\n to update it")
	}
	nl := "\n"
	if bytes.Contains(data, []byte("\r\n")) {
		nl = "\r\n"
	}
	starts := lineStarts(data)
	lines := len(starts) - 1
	line := func(n int) []byte { return data[starts[n-1]:starts[n]] } // 1-based, newline included
	// keepFrom walks back from line end-1 over the lines that belong to
	// what follows (trailingKeep) and returns the first line it keeps.
	keepFrom := func(end, col, floor int) int {
		for end-1 > floor && trailingKeep(bytes.TrimRight(line(end-1), "\n"), col) {
			end--
		}
		return end
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k := root.Content[i]
		if k.Value != "expect" {
			continue
		}
		end := lines + 1 // the line after the block
		if i+2 < len(root.Content) {
			end = root.Content[i+2].Line
		}
		end = keepFrom(end, k.Column, k.Line)
		var out bytes.Buffer
		out.Write(data[:starts[k.Line-1]])
		out.WriteString(expectYAML(x, strings.Repeat(" ", max(k.Column-1, 0)), nl))
		out.Write(data[starts[end-1]:])
		return out.Bytes(), nil
	}
	// No expect: after the last key, before the blank lines, comments and
	// document end marker that close the file.
	end := keepFrom(lines+1, 1, 0)
	var out bytes.Buffer
	out.Write(data[:starts[end-1]])
	if out.Len() > 0 && !bytes.HasSuffix(out.Bytes(), []byte("\n")) {
		out.WriteString(nl)
	}
	out.WriteString(expectYAML(x, strings.Repeat(" ", max(root.Column-1, 0)), nl))
	out.Write(data[starts[end-1]:])
	return out.Bytes(), nil
}

// expectYAML writes x as a block "expect:" key indented by indent, each
// event one flow mapping (as Format writes it), lines ended by nl.
func expectYAML(x *Expect, indent, nl string) string {
	var b strings.Builder
	b.WriteString(indent + "expect:" + nl)
	if len(x.Events) == 0 {
		b.WriteString(indent + "  events: []" + nl)
	} else {
		b.WriteString(indent + "  events:" + nl)
		for i := range x.Events {
			b.WriteString(indent + "    - " + eventFlow(&x.Events[i]) + nl)
		}
	}
	if x.Final != nil {
		b.WriteString(indent + "  final: " + finalFlow(x.Final) + nl)
	}
	return b.String()
}

func setExpectJSON(data []byte, x *Expect) ([]byte, error) {
	bom := 0
	if bytes.HasPrefix(data, []byte("\ufeff")) {
		bom = len("\ufeff")
	}
	dec := jsontext.NewDecoder(bytes.NewReader(data[bom:]))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, errors.New("the file is not a JSON object")
	}
	open := bom + int(dec.InputOffset()) // just after '{'
	// The layout of the new value: that of the expect member, or of the
	// last member, which the new one follows: on a line of its own,
	// indented by indent, or not.
	indent, multiline := "  ", true
	valStart, valEnd, lastEnd := -1, -1, -1
	for dec.PeekKind() != '}' {
		before := bom + int(dec.InputOffset())
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		isExpect := tok.String() == "expect"
		if valStart < 0 {
			indent, multiline = memberIndent(data, before)
		}
		raw, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		end := bom + int(dec.InputOffset())
		start := end - len(raw)
		if start < 0 || !bytes.Equal(data[start:end], raw) {
			return nil, errors.New("cannot find the members' values in this JSON file")
		}
		if isExpect {
			valStart, valEnd = start, end
		}
		lastEnd = end
	}
	nl := "\n"
	if bytes.Contains(data, []byte("\r\n")) {
		nl = "\r\n"
	}
	var out bytes.Buffer
	switch {
	case valStart >= 0:
		out.Write(data[:valStart])
		out.WriteString(expectJSON(x, indent, nl, multiline))
		out.Write(data[valEnd:])
	case lastEnd >= 0: // a new last member
		out.Write(data[:lastEnd])
		if multiline {
			out.WriteString("," + nl + indent)
		} else {
			out.WriteString(", ")
		}
		out.WriteString(`"expect": ` + expectJSON(x, indent, nl, multiline))
		out.Write(data[lastEnd:])
	default: // {}
		out.Write(data[:open])
		out.WriteString(nl + indent + `"expect": ` + expectJSON(x, indent, nl, true) + nl)
		out.Write(data[open:])
	}
	return out.Bytes(), nil
}

// memberIndent returns the indentation of the member whose name is the
// next token after offset from (the spaces and tabs between the line
// break before the name and the name), and whether the name starts a line.
func memberIndent(data []byte, from int) (string, bool) {
	i := from
	for i < len(data) && strings.IndexByte(" \t\r\n,", data[i]) >= 0 {
		i++
	}
	j := i
	for j > from && (data[j-1] == ' ' || data[j-1] == '\t') {
		j--
	}
	if j > from && data[j-1] == '\n' {
		return string(data[j:i]), true
	}
	return "", false
}

// expectJSON writes x as a JSON object, the value of a member indented
// by indent (one step: the file's unit): when multiline, its members one
// step deeper on lines of their own, each event on a line of its own two
// steps deeper; else on one line.
func expectJSON(x *Expect, indent, nl string, multiline bool) string {
	unit := indent
	if unit == "" {
		unit = "  "
	}
	in1, in2 := indent+unit, indent+unit+unit
	sep, evSep, lb, rb := nl+in1, ","+nl+in2, "["+nl+in2, nl+in1+"]"
	if !multiline {
		sep, evSep, lb, rb = "", ", ", "[", "]"
	}
	var b strings.Builder
	b.WriteString("{" + sep + `"events": `)
	if len(x.Events) == 0 {
		b.WriteString("[]")
	} else {
		b.WriteString(lb)
		for i := range x.Events {
			if i > 0 {
				b.WriteString(evSep)
			}
			ev := &x.Events[i]
			keys := ev.Keys
			if len(keys) != len(ev.Fields) {
				keys = eventKeys(ev)
			}
			b.WriteString("{")
			for j, k := range keys {
				if j > 0 {
					b.WriteString(", ")
				}
				b.WriteString(jsonText(k) + ": " + jsonText(ev.Fields[k]))
			}
			b.WriteString("}")
		}
		b.WriteString(rb)
	}
	if f := x.Final; f != nil {
		b.WriteString("," + sep)
		if !multiline {
			b.WriteString(" ")
		}
		var parts []string
		if f.State != nil {
			parts = append(parts, `"state": `+jsonText(*f.State))
		}
		if f.Attempt != nil {
			parts = append(parts, `"attempt": `+jsonText(*f.Attempt))
		}
		if f.IsRetrying != nil {
			parts = append(parts, `"isRetrying": `+jsonText(*f.IsRetrying))
		}
		if f.HasUnresolved || f.UnresolvedPrompts != nil {
			ps := make([]string, len(f.UnresolvedPrompts))
			for i, p := range f.UnresolvedPrompts {
				ps[i] = jsonText(p)
			}
			parts = append(parts, `"unresolvedPrompts": [`+strings.Join(ps, ", ")+"]")
		}
		b.WriteString(`"final": {` + strings.Join(parts, ", ") + "}")
	}
	if multiline {
		b.WriteString(nl + indent)
	}
	b.WriteString("}")
	return b.String()
}

// eventKeys returns ev's keys: Keys, then the fields it does not list, sorted.
func eventKeys(ev *ExpectEvent) []string {
	keys := slices.Clone(ev.Keys)
	var extra []string
	for k := range ev.Fields {
		if !slices.Contains(keys, k) {
			extra = append(extra, k)
		}
	}
	slices.Sort(extra)
	return append(keys, extra...)
}

// jsonText writes v as compact JSON, without escaping <, > and & for HTML.
func jsonText(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "null"
	}
	return strings.TrimSuffix(b.String(), "\n")
}
