package rpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ohmypi/retryfsm/internal/jsonw"
	"github.com/ohmypi/retryfsm/internal/suggest"
	"github.com/ohmypi/retryfsm/session"
)

// commandSpec is one command of the protocol: a session command (its row
// of session's command table: name, arguments, event) or one the server
// answers itself (run). Parsing, dispatch, the help text and "did you
// mean" read this table; a session command is added to session's table,
// not here.
type commandSpec struct {
	name   string
	fields []string
	// help is the command in the CLI's help: its name and fields, and a
	// note when it needs one.
	help string
	// cmd is the session command; nil for a command the server answers
	// itself (run).
	cmd *session.Command
	// run runs a command that is no session event.
	run func(s *server, c *command) error
}

// commands is the protocol's command table, in the order the help and the
// errors list them: session's commands, then the server's own.
var commands = append(sessionCommands(),
	commandSpec{name: "advance", fields: []string{"ms"}, run: advance, help: "and with --virtual advance {ms}"})

// sessionCommands are the rows of session's command table.
func sessionCommands() []commandSpec {
	cmds := session.Commands()
	specs := make([]commandSpec, len(cmds))
	for i := range cmds {
		c := &cmds[i]
		sp := commandSpec{name: c.Name, help: c.Usage(), cmd: c}
		for _, a := range c.Args {
			sp.fields = append(sp.fields, a.Name)
		}
		specs[i] = sp
	}
	return specs
}

var (
	// commandNames are the commands' names, in the table's order.
	commandNames []string
	// commandByName finds a command's row.
	commandByName = map[string]*commandSpec{}
	// fieldNames are the fields any command reads; a decoded command
	// holds their raw values by index (fieldIndex).
	fieldNames []string
	fieldIndex = map[string]int{}
)

func init() {
	for i := range commands {
		sp := &commands[i]
		commandNames = append(commandNames, sp.name)
		commandByName[sp.name] = sp
		for _, f := range sp.fields {
			if _, ok := fieldIndex[f]; !ok {
				fieldIndex[f] = len(fieldNames)
				fieldNames = append(fieldNames, f)
			}
		}
	}
	if len(fieldNames) > maxFields {
		panic("rpc: more command fields than maxFields")
	}
}

// maxFields bounds the distinct fields of the commands (command.raw).
const maxFields = 8

// CommandsHelp describes the commands and their fields, in the table's
// order, for a help text: "prompt {message} (...), abort, ...".
func CommandsHelp() string {
	parts := make([]string, len(commands))
	for i, sp := range commands {
		parts[i] = sp.help
	}
	return strings.Join(parts, ", ")
}

// cmdError is a command that cannot be run: the response's command and
// error text.
type cmdError struct {
	command, msg string
}

// command is a command line decoded once: its id, its type, its row of
// the table (nil for an unknown command) and the raw values of the fields
// the commands read (nil when absent); unknown holds the line's other
// fields' names, for "did you mean".
type command struct {
	id      string
	hasID   bool
	typ     string
	spec    *commandSpec
	raw     [maxFields]json.RawMessage
	unknown []string
}

// field is the raw value of field name (nil when absent).
func (c *command) field(name string) json.RawMessage { return c.raw[fieldIndex[name]] }

// handleLine handles one input line: a command, or an error response.
func (s *server) handleLine(line []byte, tooLong bool) error {
	// The serve loop flushes the output after the next wake-up is armed:
	// a client that has read a command's output may move a mock clock on
	// at once.
	if tooLong {
		s.respondErr("", false, "parse", fmt.Sprintf("Failed to parse command: line longer than %d bytes (discarded unread)", MaxLineSize))
		return nil
	}
	if len(bytes.TrimSpace(line)) == 0 {
		return nil // blank lines are skipped
	}
	if ce := s.parseCommand(line, &s.next); ce != nil {
		s.respondErr(s.next.id, s.next.hasID, ce.command, ce.msg)
		return nil
	}
	if err := s.run(&s.next); err != nil {
		return s.fail(err)
	}
	return nil
}

// parseCommand decodes a command line into c. c.id is set (hasID) when
// the line is an object whose "id" is a string, even when the command is
// otherwise invalid.
func (s *server) parseCommand(line []byte, c *command) *cmdError {
	unknown := c.unknown[:0]
	*c = command{unknown: unknown}
	if s.parseFast(line, c) {
		c.spec = commandByName[c.typ]
		return nil
	}
	*c = command{unknown: unknown}
	if !json.Valid(line) {
		var v any
		err := json.Unmarshal(line, &v)
		msg := "invalid JSON"
		if err != nil {
			msg = "invalid JSON: " + err.Error()
		}
		return &cmdError{"parse", "Failed to parse command: " + msg}
	}
	trimmed := bytes.TrimLeft(line, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return &cmdError{"parse", "Failed to parse command: expected a JSON object, got " + describeRaw(trimmed)}
	}
	fields, dup, err := decodeFields(line)
	if err != nil {
		return &cmdError{"parse", "Failed to parse command: " + err.Error()}
	}
	command := "parse"
	typRaw, hasType := fields["type"]
	var typ string
	typOK := hasType && json.Unmarshal(typRaw, &typ) == nil && isJSONString(typRaw)
	if typOK {
		command = typ
	}
	if raw, ok := fields["id"]; ok {
		if !isJSONString(raw) {
			return &cmdError{command, `"id" must be a string, got ` + describeRaw(raw)}
		}
		_ = json.Unmarshal(raw, &c.id)
		c.hasID = true
	}
	if dup != "" {
		if dup == "type" {
			command = "parse"
		}
		dup = quoteKey(dup)
	} else {
		dup = nestedDuplicate(line)
	}
	switch {
	case dup != "":
		return &cmdError{command, "Failed to parse command: duplicate key " + dup + " (each key may appear once)"}
	case !hasType:
		return &cmdError{command, `missing "type" (the command: one of ` + strings.Join(commandNames, ", ") + ")" + suggestNear(fields, []string{"type"})}
	case !typOK:
		return &cmdError{command, `"type" must be a string naming the command (one of ` + strings.Join(commandNames, ", ") + "), got " + describeRaw(typRaw)}
	}
	c.typ, c.spec = typ, commandByName[typ]
	for name, raw := range fields {
		if i, ok := fieldIndex[name]; ok {
			c.raw[i] = raw
		} else if name != "id" && name != "type" {
			c.unknown = append(c.unknown, name)
		}
	}
	return nil
}

// parseFast reads a well-formed command line in one pass with
// encoding/json/v2's tokenizer, which refuses duplicate names at every
// depth and invalid UTF-8; the values are slices of line. It reports
// false for anything else, and for names or ids with escapes: the slow
// path then says precisely what is wrong, or decodes them.
func (s *server) parseFast(line []byte, c *command) bool {
	s.rd.Reset(line)
	d := s.dec
	d.Reset(&s.rd)
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '{' {
		return false
	}
	hasType := false
	for d.PeekKind() != '}' {
		// The decoder's values are valid until the next read: names and
		// values are taken from line, at the offsets it read them from.
		name, err := d.ReadValue()
		if err != nil || bytes.IndexByte(name, '\\') >= 0 {
			return false
		}
		end := int(d.InputOffset())
		key := line[end-len(name)+1 : end-1]
		v, err := d.ReadValue()
		if err != nil {
			return false
		}
		end = int(d.InputOffset())
		raw := line[end-len(v) : end]
		switch string(key) {
		case "id", "type":
			if raw[0] != '"' || bytes.IndexByte(raw, '\\') >= 0 {
				return false
			}
			if key[0] == 'i' {
				c.id, c.hasID = string(raw[1:len(raw)-1]), true
			} else {
				c.typ, hasType = string(raw[1:len(raw)-1]), true
			}
		default:
			if i, ok := fieldIndex[string(key)]; ok {
				c.raw[i] = raw
			} else {
				c.unknown = append(c.unknown, string(key))
			}
		}
	}
	if _, err := d.ReadToken(); err != nil {
		return false
	}
	if _, err := d.ReadToken(); err != io.EOF {
		return false // more than one value
	}
	return hasType
}

// decodeFields decodes a valid JSON object's members (keys compared after
// unescaping, exactly). dup is the first key that appears twice; fields
// then holds its first value.
func decodeFields(line []byte) (fields map[string]json.RawMessage, dup string, err error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	if _, err := dec.Token(); err != nil { // '{'
		return nil, "", err
	}
	fields = make(map[string]json.RawMessage, 4)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, "", err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, "", err
		}
		if _, seen := fields[key]; seen {
			if dup == "" {
				dup = key
			}
			continue
		}
		fields[key] = v
	}
	return fields, dup, nil
}

// quoteKey is key quoted for a message, at most 40 bytes of it.
func quoteKey(key string) string {
	if len(key) > 40 {
		key = key[:40] + "..."
	}
	return string(jsonw.AppendString(nil, key))
}

// nestedDuplicate finds a name that appears twice in an object nested in
// the valid JSON object line (compared after unescaping, exactly): it
// returns it quoted and followed by where it is (`"baseDelayMs" in
// settings`), or "" when there is none.
func nestedDuplicate(line []byte) string {
	dec := jsontext.NewDecoder(bytes.NewReader(line), jsontext.AllowInvalidUTF8(true))
	_, err := dec.ReadValue()
	var se *jsontext.SyntacticError
	if !errors.As(err, &se) || !errors.Is(se.Err, jsontext.ErrDuplicateName) {
		return ""
	}
	var path []string
	for tok := range se.JSONPointer.Tokens() {
		path = append(path, tok)
	}
	if len(path) < 2 {
		return "" // a top-level one is found by decodeFields
	}
	where := strings.Join(path[:len(path)-1], ".")
	if len(where) > 80 {
		where = where[:80] + "..."
	}
	return quoteKey(path[len(path)-1]) + " in " + where
}

// suggestNear is "did you mean" for a field of want that the line lacks
// and one of its fields (not a field any command reads) resembles: `;
// "mesage" is not a field; did you mean message?`, or "".
func suggestNear(fields map[string]json.RawMessage, want []string) string {
	for name := range fields {
		if _, ok := fieldIndex[name]; ok || name == "id" || name == "type" {
			continue
		}
		if dym := suggest.Key(name, want); dym != "" {
			return "; " + quoteKey(name) + " is not a field" + dym
		}
	}
	return ""
}

// suggestCommand is "did you mean" for an unknown command: the commands
// one edit away (case aside: "get_stat", "Abort"), or that it begins
// ("set_auto"); a name further off (another protocol's command, such as
// "reboot") gets none.
func suggestCommand(typ string) string {
	if len(typ) > 64 {
		return ""
	}
	var near []string
	for _, name := range commandNames {
		if suggest.Distance(strings.ToLower(typ), name) <= 1 || len(typ) >= 3 && strings.HasPrefix(name, typ) {
			near = append(near, name)
		}
	}
	return suggest.DidYouMean(typ, near, "")
}

// suggestField is suggestNear for a decoded command: its unknown fields
// against its own.
func (c *command) suggestField() string {
	if c.spec == nil {
		return ""
	}
	for _, name := range c.unknown {
		if dym := suggest.Key(name, c.spec.fields); dym != "" {
			return "; " + quoteKey(name) + " is not a field of " + c.spec.name + dym
		}
	}
	return ""
}

func isJSONString(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '"'
}

// describeRaw names a JSON value for an error message.
func describeRaw(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	clip := func(b []byte) string {
		const n = 40
		if len(b) > n {
			return string(b[:n]) + "..."
		}
		return string(b)
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "string " + clip(raw)
	case 't', 'f':
		return "boolean " + string(raw)
	case 'n':
		return "null"
	}
	return "number " + clip(raw)
}

// run runs a valid command: its row's checks, then its session event (the
// session answers it, in the original's order with the events it causes)
// or its own run.
func (s *server) run(c *command) error {
	sp := c.spec
	if sp == nil {
		s.respondErr(c.id, c.hasID, c.typ, "Unknown command: "+c.typ+" (commands: "+strings.Join(commandNames, ", ")+")"+
			suggestCommand(c.typ))
		return nil
	}
	if sp.run != nil {
		return sp.run(s, c)
	}
	s.event = sp.cmd.Event(c.id)
	for _, a := range sp.cmd.Args {
		if msg := s.checkArg(c, a); msg != "" {
			s.respondErr(c.id, c.hasID, c.typ, msg+c.suggestField())
			return nil
		}
	}
	return s.session(c)
}

// checkArg reads and checks argument a of command c into the server's
// event (a prompt's text into s.message); it returns what is wrong, ""
// when nothing is.
func (s *server) checkArg(c *command, a session.Arg) string {
	raw := c.field(a.Name)
	if raw == nil {
		if a.Optional {
			return ""
		}
		return fieldError(c.typ, a.Name, a.Kind.Want(), raw, false)
	}
	valid := true
	switch a.Kind {
	case session.ArgBool:
		valid = isJSONBool(raw) && json.Unmarshal(raw, &s.event.Enabled) == nil
	case session.ArgText:
		valid = isJSONString(raw) && json.Unmarshal(raw, &s.message) == nil
	case session.ArgQueueMode:
		valid = isStreamingBehavior(raw)
	case session.ArgImages:
		trimmed := bytes.TrimSpace(raw)
		valid = len(trimmed) > 0 && trimmed[0] == '['
	case session.ArgSettings:
		return s.checkSettings(c, a, raw)
	}
	if !valid {
		return fieldError(c.typ, a.Name, a.Kind.Want(), raw, true)
	}
	return ""
}

// checkSettings: an object of retry settings, merged over those in force
// and compiled into the policy the event carries.
func (s *server) checkSettings(c *command, a session.Arg, raw json.RawMessage) string {
	if trimmed := bytes.TrimSpace(raw); len(trimmed) == 0 || trimmed[0] != '{' {
		return fieldError(c.typ, a.Name, a.Kind.Want(), raw, true)
	}
	p, err := s.sess.MergeSettings(raw)
	if err != nil {
		return c.typ + ": " + a.Name + ": " + err.Error()
	}
	s.event.Policy = p
	return ""
}

// advance moves virtual time on by ms.
func advance(s *server, c *command) error {
	id, hasID, typ := c.id, c.hasID, c.typ
	if !s.virtual {
		s.respondErr(id, hasID, typ, "advance needs --virtual (this server runs on the real clock)")
		return nil
	}
	raw := c.field("ms")
	ms, valid := parseMs(raw)
	if raw == nil || !valid {
		s.respondErr(id, hasID, typ, fieldError("advance", "ms", fmt.Sprintf("an integer from 0 to %d", int64(MaxAdvanceMs)), raw, raw != nil)+c.suggestField())
		return nil
	}
	now := s.sched.Elapsed()
	target := now + time.Duration(ms)*time.Millisecond
	if left := time.Duration(math.MaxInt64) - now; time.Duration(ms) > left/time.Millisecond {
		s.respondErr(id, hasID, typ, fmt.Sprintf("advance: \"ms\" = %d would pass the largest virtual time, %d ms (now %d ms: at most %d more)",
			ms, int64(math.MaxInt64/int64(time.Millisecond)), now.Milliseconds(), int64(left/time.Millisecond)))
		return nil
	}
	if err := s.sched.Advance(target); err != nil {
		return err
	}
	s.respondOK(id, hasID, typ, fmt.Appendf(nil, `{"t":%d}`, s.sched.Elapsed().Milliseconds()))
	return nil
}

// session runs command c's event on the session as a scheduler event
// (runCmd); the session writes its response where the original does
// (before or after the events it causes), and Record turns it into the
// protocol's response. A command the session did not answer gets a
// success response after its events.
func (s *server) session(c *command) error {
	s.cur = running{id: c.id, hasID: c.hasID, typ: c.typ}
	s.cmd = &s.cur
	err := s.at(s.runCmd)
	s.cmd = nil
	if !s.cur.responded {
		s.respondOK(c.id, c.hasID, c.typ, nil)
	}
	return err
}

// runCommand is the scheduler event of the command being run (s.cur): its
// session event.
func (s *server) runCommand() {
	if s.event.Kind == session.Prompt {
		s.ev.setPrompt(s.message)
	}
	s.sess.Step(s.event)
}

// isStreamingBehavior reports whether raw is "steer" or "followUp".
func isStreamingBehavior(raw json.RawMessage) bool {
	var v string
	return isJSONString(raw) && json.Unmarshal(raw, &v) == nil && (v == "steer" || v == "followUp")
}

func isJSONBool(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && (raw[0] == 't' || raw[0] == 'f')
}

// parseMs reads a non-negative integer number of milliseconds (any JSON
// number with an integer value, such as 1000 or 1e3).
func parseMs(raw json.RawMessage) (int64, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || !(raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') {
		return 0, false
	}
	if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return n, n >= 0 && n <= MaxAdvanceMs
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f != math.Trunc(f) || f < 0 || f > MaxAdvanceMs {
		return 0, false
	}
	return int64(f), true
}

func fieldError(command, field, want string, raw json.RawMessage, present bool) string {
	if !present {
		return fmt.Sprintf("%s: missing %q (%s)", command, field, want)
	}
	return fmt.Sprintf("%s: %q must be %s, got %s", command, field, want, describeRaw(raw))
}
