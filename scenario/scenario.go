package scenario

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"gopkg.in/yaml.v3"

	"github.com/ohmypi/retryfsm/internal/jsonw"
	"github.com/ohmypi/retryfsm/internal/suggest"
	"github.com/ohmypi/retryfsm/internal/termsafe"
	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/trace"
)

// Limits of the scenario loader.
const (
	// MaxScenarioSize is the largest scenario file accepted, in bytes.
	scnMaxSize = 1 << 20
	// MaxScenarioEntries is the largest number of turns, and of actions,
	// one scenario may list.
	scnMaxEntries = 10000
	// maxValueDepth bounds the nesting of values inside expected events.
	scnMaxValueDepth = 64
)

// Scenario defaults (see the conformance README).
const (
	scnDefaultVariant       = "sound"
	scnDefaultContextWindow = int64(200000)
	scnDefaultPrompt        = "hello"
	scnDefaultEpochMs       = int64(1771200000000) // 2026-02-16T00:00:00Z
	scnDefaultProvider      = "anthropic"
	scnDefaultModelID       = "claude-sonnet-4-5"
	scnDefaultBaseURL       = "https://api.anthropic.com"
	scnDefaultSessionID     = "session-1"
	scnDefaultSeed          = int64(1)
)

// Scenario is one scenario file, defaults applied.
type Scenario struct {
	Path        string // file it was loaded from ("" for Parse without a name)
	Name        string // "name" (default: file base name without extension)
	Description string // "description"
	Variant     string // "variant": "sound" | "original"; default "sound" (SetVariant changes it)
	// Profile is "profile": the policy profile (policy.Profiles) whose
	// settings the file's "settings" are merged over; default
	// policy.DefaultProfile, the only one variant "original" allows.
	// SetProfile changes it.
	Profile string
	// Settings are the effective retry settings: Profile's settings with
	// SettingsPatch merged over them key by key, nested objects too
	// (policy.Settings.Apply), validated.
	Settings policy.Settings
	// SettingsPatch is the file's "settings" mapping as a JSON object, its
	// keys in file order, as the file wrote them; nil when the file has none
	// (or null). SetProfile merges it over another profile's settings.
	SettingsPatch json.RawMessage
	ContextWindow int64      // "contextWindow", default 200000; 0 turns the usage rule off
	Compaction    Compaction // "compaction": {enabled, succeed}, defaults true/true
	InitialPrompt bool       // "initialPrompt", default true
	Prompt        string     // "prompt", default "hello"
	EpochMs       int64      // "epochMs", default 1771200000000
	Provider      string     // "provider", default "anthropic"
	ModelID       string     // "modelId", default "claude-sonnet-4-5"
	BaseURL       string     // "baseUrl", default "https://api.anthropic.com"
	SessionID     string     // "sessionId", default "session-1"
	// Seed is "seed": a positive integer, default 1, the seed of the
	// simulated session's random draws (the jitter). 0, in a scenario built
	// in Go that sets none, stands for 1 (Format leaves it out).
	Seed int64
	// RandomFixed is "random: {fixed: U}", U in [0, 1): every draw is U,
	// whatever Seed. It means something only when HasRandomFixed is true.
	RandomFixed float64
	// HasRandomFixed reports whether the file gives "random: {fixed: U}".
	HasRandomFixed bool
	Turns          []Turn   // "turns"
	Actions        []Action // "actions"
	Expect         *Expect  // "expect"; nil when absent

	src *scnSource // where profile, variant and settings are in the file; nil when none is
}

// Compaction configures the overflow-compaction stub.
type Compaction struct{ Enabled, Succeed bool }

// Usage is a turn's scripted usage (the "usage" key).
type Usage struct {
	Input     int64 // "input"
	CacheRead int64 // "cacheRead"
}

// Turn is one scripted model reply.
type Turn struct {
	StopReason   policy.StopReason // "stopReason", required: stop|length|toolUse|error|aborted
	ErrorMessage string            // "errorMessage"
	Usage        Usage             // "usage": {input, cacheRead}, non-negative integers
	SwitchModel  bool              // "switchModel", default false
	Duration     time.Duration     // "durationMs", default 0, non-negative integer ms
	// Status is "status": the HTTP status of the reply's response, an
	// integer from 100 to 599; 0 when not given (unknown).
	Status int
	// Headers is "headers": the response's headers, by lower-case name
	// (policy.AssistantMessage.ValidateHTTP), values strings; nil when not
	// given or empty.
	Headers map[string]string
	Pos     Pos
}

// Reply is the assistant message the turn scripts, its Status and Headers
// included (Headers is the turn's map, not a copy: do not modify it).
func (t *Turn) Reply() policy.AssistantMessage {
	return policy.AssistantMessage{StopReason: t.StopReason, ErrorMessage: t.ErrorMessage, InputTokens: t.Usage.Input, CacheReadTokens: t.Usage.CacheRead,
		Status: t.Status, Headers: t.Headers}
}

// Action is one scripted client command at a virtual time.
type Action struct {
	At      time.Duration // "at": required, ms, non-negative integer
	Do      string        // "do": abort_retry|abort|set_auto_retry|prompt|get_state
	ID      string        // "id", optional
	Enabled *bool         // "enabled": required for set_auto_retry, not allowed for other kinds
	Message string        // "message": for prompt only (default ""); not allowed for other kinds
	Pos     Pos
}

// Expect is the expectation part of a scenario.
type Expect struct {
	Events []ExpectEvent // "events": ordered list of objects
	Final  *ExpectFinal  // "final"
}

// ExpectEvent is a partial trace line: each listed field must equal the trace line's field.
type ExpectEvent struct {
	Fields map[string]any // values normalised to JSON types: string, float64, bool, nil, []any, map[string]any
	Keys   []string       // the field names in file order (for printing)
	Pos    Pos
}

// ExpectFinal is the expected final state of the session.
type ExpectFinal struct {
	State             *string // one of idle|backoff|continuing|exhausted|cancelled
	Attempt           *int
	IsRetrying        *bool
	UnresolvedPrompts []int // nil when absent; non-nil (possibly empty) when given
	HasUnresolved     bool  // true when "unresolvedPrompts" was given
	Pos               Pos
}

// Pos is a position in a scenario file. Line and Column are 1-based; 0
// means unknown.
type Pos struct {
	File         string
	Line, Column int
}

// String gives "file:line:col"; the file is omitted when empty, the column
// when unknown, and line and column when the line is unknown.
func (p Pos) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		if b.Len() > 0 {
			b.WriteByte(':')
		}
		b.WriteString(strconv.Itoa(p.Line))
		if p.Column > 0 {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(p.Column))
		}
	}
	return b.String()
}

// Error is every validation/parse error: where and what.
type Error struct {
	Pos   Pos
	Field string // path like "turns[2].stopReason"; "" for the whole file; keys from the file escaped (termsafe.Text), those over 64 bytes shortened
	Msg   string // what is wrong and what is allowed
	Err   error  // underlying error, if any (I/O, *policy.SettingsError)
}

// Error gives "file:3:14: turns[2].stopReason: unknown value ...", leaving
// out the parts that are empty.
func (e *Error) Error() string {
	parts := make([]string, 0, 3)
	if s := e.Pos.String(); s != "" {
		parts = append(parts, s)
	}
	if e.Field != "" {
		parts = append(parts, e.Field)
	}
	msg := e.Msg
	if msg == "" {
		msg = "invalid scenario"
	}
	parts = append(parts, msg)
	// File names and scenario text are printed escaped (termsafe.Text): an
	// error is always one line and cannot send the terminal escape codes.
	return termsafe.Text(strings.Join(parts, ": "))
}

// Unwrap returns the underlying error (an I/O error or a
// *policy.SettingsError), or nil.
func (e *Error) Unwrap() error { return e.Err }

// Load reads and validates one scenario file (YAML or JSON).
func Load(path string) (*Scenario, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &Error{Pos: Pos{File: path}, Msg: err.Error(), Err: err}
	}
	defer f.Close()
	// Read in one go when the size is known (it is for a regular file),
	// never more than the limit plus one byte.
	size := 512
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		size = int(min(fi.Size(), scnMaxSize)) + 1
	}
	data, err := readAtMost(f, size, scnMaxSize+1)
	if err != nil {
		return nil, &Error{Pos: Pos{File: path}, Msg: err.Error(), Err: err}
	}
	return Parse(path, data)
}

// readAtMost reads r to its end or to limit bytes, whichever is first,
// into a buffer first sized hint.
func readAtMost(r io.Reader, hint, limit int) ([]byte, error) {
	b := make([]byte, 0, hint)
	for len(b) < limit {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):min(cap(b), limit)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
	return b, nil
}

// Parse reads and validates one scenario from data; name is the
// file name used in error positions, Scenario.Path and the default Name.
// A name ending in ".json" is read as JSON, any other as YAML.
func Parse(name string, data []byte) (sc *Scenario, err error) {
	p := &scnParser{file: name}
	defer func() {
		if r := recover(); r != nil {
			b, ok := r.(scnBailout)
			if !ok {
				panic(r) // a bug, not a scenario error
			}
			sc, err = nil, b.err
		}
	}()
	if len(data) > scnMaxSize {
		p.failPos(Pos{File: name}, "", fmt.Sprintf("file is larger than %d bytes", scnMaxSize))
	}
	var root *yaml.Node
	switch {
	case scnIsJSONName(name):
		root = p.decodeJSON(data)
	case json.Valid(data):
		// JSON is YAML, but the YAML library rejects some valid JSON
		// (escapes such as \/ and surrogate pairs, keys over 1024
		// characters), so JSON input is read as JSON.
		root = p.decodeJSON(data)
	default:
		root = p.decode(data)
	}
	if scnTestHook != nil {
		scnTestHook()
	}
	return p.scenario(root), nil
}

// scnTestHook, when set (by tests only), runs inside Parse after the file
// is decoded.
var scnTestHook func()

// Files expands paths: a directory gives every *.yaml, *.yml and *.json
// regular file in it and, recursively, in its subdirectories (sorted by
// path, byte order; skipping *.out.jsonl, manifest.json (a conformance
// set's index) and every file or directory whose name starts with '.' or
// '_'; symbolic links to regular files are followed, symbolic links to
// directories are not, so there are no loops; at most scnMaxDepth levels
// below the directory given); a path that is not a directory is taken as
// is, whatever it is. Directory entries that are left out because they are
// not regular files (named pipes, sockets, devices, broken links, links to
// directories, directories nested too deep) are left out silently: use
// Find to report them.
func Files(paths ...string) ([]string, error) {
	files, _, err := Find(paths...)
	return files, err
}

// scnMaxDepth is how many levels of subdirectories below a directory
// given to Find are read.
const scnMaxDepth = 16

// SkippedFile is a directory entry that Find left out: a file with a
// scenario file name that is not a regular file (reading a named pipe,
// say, would block until someone writes to it), a symbolic link to a
// directory (not followed) or a directory nested too deep.
type SkippedFile struct {
	Path string // the directory joined with the entry's name
	What string // what it is: "a named pipe", "a socket", "a device", "a broken symbolic link", "a symbolic link to a directory", ...
}

// String gives "PATH: skipped: WHAT, not a regular file" (for a directory:
// "PATH: skipped: WHAT, not read"), the path escaped (termsafe.Text).
func (s SkippedFile) String() string {
	why := ", not a regular file"
	if strings.HasSuffix(s.What, "directory") || strings.Contains(s.What, "levels deep") {
		why = ", not read"
	}
	return termsafe.Text(s.Path + ": skipped: " + s.What + why)
}

// Find is Files that also returns the directory entries it left out
// (see SkippedFile), in the order met (depth first, by name). A path given
// explicitly is never skipped: it is returned as is, even a named pipe or
// a symbolic link to a directory (which is then read).
func Find(paths ...string) (files []string, skipped []SkippedFile, err error) {
	for _, path := range paths {
		info, err := os.Stat(path)
		if err != nil {
			return nil, nil, err
		}
		if !info.IsDir() {
			files = append(files, path)
			continue
		}
		var found []string
		if err := scnWalk(path, 0, &found, &skipped); err != nil {
			return nil, nil, err
		}
		slices.Sort(found)
		files = append(files, found...)
	}
	return files, skipped, nil
}

// scnWalk adds the scenario files of directory dir, depth levels below the
// directory given to Find, and of its subdirectories, to found.
func scnWalk(dir string, depth int, found *[]string, skipped *[]SkippedFile) error {
	entries, err := os.ReadDir(dir) // sorted by file name
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			continue
		}
		full := filepath.Join(dir, name)
		mode := e.Type()
		if mode.IsDir() {
			if depth >= scnMaxDepth {
				*skipped = append(*skipped, SkippedFile{Path: full, What: fmt.Sprintf("a directory more than %d levels deep", scnMaxDepth)})
				continue
			}
			if err := scnWalk(full, depth+1, found, skipped); err != nil {
				return err
			}
			continue
		}
		what := ""
		if mode&fs.ModeSymlink != 0 {
			st, err := os.Stat(full)
			switch {
			case err == nil && st.IsDir():
				// Not followed (a link may lead back up: no loops),
				// whatever its name.
				*skipped = append(*skipped, SkippedFile{Path: full, What: "a symbolic link to a directory"})
				continue
			case errors.Is(err, syscall.ELOOP):
				what = "a symbolic link loop"
			case err != nil:
				what = "a broken symbolic link"
			case !st.Mode().IsRegular():
				what = "a symbolic link to " + scnDescribeMode(st.Mode())
			}
		} else if !mode.IsRegular() {
			what = scnDescribeMode(mode)
		}
		if !scnIsScenarioName(name) {
			continue
		}
		if what != "" {
			*skipped = append(*skipped, SkippedFile{Path: full, What: what})
			continue
		}
		*found = append(*found, full)
	}
	return nil
}

// scnDescribeMode names the type of a file that is not a regular file.
func scnDescribeMode(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "a special file"
}

func scnIsScenarioName(name string) bool {
	if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || strings.HasSuffix(name, ".out.jsonl") || name == "manifest.json" {
		return false
	}
	switch filepath.Ext(name) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// ---- parser ----

// scnBailout carries the first error out of the recursive walk.
type scnBailout struct{ err *Error }

type scnParser struct{ file string }

func (p *scnParser) failPos(pos Pos, field, msg string) {
	panic(scnBailout{&Error{Pos: pos, Field: scnShortPath(field), Msg: msg}})
}

// scnMaxPath bounds the length of a field path in an error, in bytes: a
// longer one (keys nested deep, each up to scnMaxKeyInPath) keeps its start
// and its end around a "…".
const scnMaxPath = 256

func scnShortPath(path string) string {
	if len(path) <= scnMaxPath {
		return path
	}
	head, tail := 96, len(path)-(scnMaxPath-96-len("…"))
	for head > 0 && !utf8.RuneStart(path[head]) {
		head--
	}
	for tail < len(path) && !utf8.RuneStart(path[tail]) {
		tail++
	}
	return path[:head] + "…" + path[tail:]
}

func (p *scnParser) fail(n *yaml.Node, field, format string, args ...any) {
	p.failPos(p.pos(n), field, fmt.Sprintf(format, args...))
}

func (p *scnParser) pos(n *yaml.Node) Pos {
	if n == nil {
		return Pos{File: p.file}
	}
	return Pos{File: p.file, Line: n.Line, Column: n.Column}
}

// decode parses exactly one YAML document and returns its root node.
func (p *scnParser) decode(data []byte) *yaml.Node {
	var doc yaml.Node
	// A stream holds a second document only after a "---" or "..."
	// marker at the start of a line; without one, yaml.Unmarshal (which
	// reads the first document from memory) is enough. Anything unusual
	// (a marker, an error, no document) takes the Decoder's path, whose
	// errors are the ones reported.
	if !scnHasDocMarker(data) {
		if err := yaml.Unmarshal(data, &doc); err == nil && doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 && doc.Content[0] != nil {
			root := doc.Content[0]
			p.rejectAliases(root)
			p.checkRoot(root)
			return root
		}
		doc = yaml.Node{}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			p.failPos(Pos{File: p.file}, "", "empty file: expected a mapping with the scenario keys")
		}
		p.yamlSyntaxError(data, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		n := &extra
		if len(extra.Content) > 0 && extra.Content[0].Line > 0 {
			n = extra.Content[0]
		}
		p.fail(n, "", "more than one YAML document in the file (only one scenario per file is allowed)")
	} else if !errors.Is(err, io.EOF) {
		p.yamlSyntaxError(data, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0] == nil {
		p.fail(&doc, "", "empty document: expected a mapping with the scenario keys")
	}
	root := doc.Content[0]
	p.rejectAliases(root)
	p.checkRoot(root)
	return root
}

// scnHasDocMarker reports whether a line of data starts with a document
// marker ("---" or "...").
func scnHasDocMarker(data []byte) bool {
	for line := range bytes.Lines(data) {
		if bytes.HasPrefix(line, []byte("---")) || bytes.HasPrefix(line, []byte("...")) {
			return true
		}
	}
	return false
}

func (p *scnParser) checkRoot(root *yaml.Node) {
	if root.Kind == yaml.ScalarNode && root.Value == "" && root.ShortTag() == "!!null" && root.Style&yaml.TaggedStyle == 0 {
		p.fail(root, "", "empty document: expected a mapping with the scenario keys")
	}
	if root.Kind != yaml.MappingNode {
		p.fail(root, "", "the top level must be a mapping with the scenario keys, got %s", scnDescribe(root))
	}
}

// decodeJSON builds a yaml.Node tree, with positions, from JSON; a syntax
// error is reported at its line and column.
func (p *scnParser) decodeJSON(data []byte) *yaml.Node {
	data = bytes.TrimPrefix(data, []byte("\ufeff")) // a byte order mark is not JSON, but harmless
	if len(bytes.Trim(data, " \t\r\n")) == 0 {
		p.failPos(Pos{File: p.file}, "", "empty file: expected a mapping with the scenario keys")
	}
	if !json.Valid(data) {
		p.jsonSyntaxError(data)
	}
	if !utf8.Valid(data) {
		// encoding/json would read it as U+FFFD: refused, as YAML does.
		off := 0
		for off < len(data) {
			r, size := utf8.DecodeRune(data[off:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			off += size
		}
		pos := Pos{File: p.file}
		pos.Line, pos.Column = scnJSONPos(data, off)
		p.failPos(pos, "", fmt.Sprintf("invalid JSON: invalid UTF-8 (found byte %#02x; a scenario file is UTF-8)", data[off]))
	}
	// jsontext (encoding/json/v2's tokenizer) walks tokens without
	// allocating for each; duplicates are reported by the loader itself,
	// with positions (the text is valid UTF-8, checked above).
	b := &scnJSONBuilder{p: p, data: data,
		dec: jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))}
	b.line, b.col = 1, 1
	tok, off := b.next()
	root := b.value(tok, off)
	p.checkRoot(root)
	return root
}

type scnJSONBuilder struct {
	p    *scnParser
	data []byte
	dec  *jsontext.Decoder
	// The position of byte offset off is line:col (col counted in
	// characters, as the YAML library does). Tokens come in increasing
	// offsets, so the position is advanced, never recomputed.
	off, line, col int
}

// skip returns the offset where the next token starts.
func (b *scnJSONBuilder) skip() int {
	off := int(b.dec.InputOffset())
	for off < len(b.data) {
		switch b.data[off] {
		case ' ', '\t', '\r', '\n', ',', ':':
			off++
			continue
		}
		break
	}
	return off
}

// next returns the next token and the byte offset where it starts. The
// input is valid JSON, so a decoding error is not expected; one would be
// reported as the syntax error of the file.
func (b *scnJSONBuilder) next() (jsontext.Token, int) {
	off := b.skip()
	tok, err := b.dec.ReadToken()
	if err != nil {
		b.p.jsonSyntaxError(b.data)
		b.p.failPos(Pos{File: b.p.file}, "", fmt.Sprintf("invalid JSON: %v", err))
	}
	return tok, off
}

func (b *scnJSONBuilder) node(kind yaml.Kind, tag, value string, off int) *yaml.Node {
	for b.off < off {
		r, size := utf8.DecodeRune(b.data[b.off:off])
		b.off += size
		if r == '\n' {
			b.line, b.col = b.line+1, 1
		} else {
			b.col++
		}
	}
	return &yaml.Node{Kind: kind, Tag: tag, Value: value, Line: b.line, Column: b.col}
}

func (b *scnJSONBuilder) value(tok jsontext.Token, off int) *yaml.Node {
	switch tok.Kind() {
	case '{':
		n := b.node(yaml.MappingNode, "!!map", "", off)
		for {
			tok, off := b.next()
			if tok.Kind() == '}' {
				return n
			}
			k := b.node(yaml.ScalarNode, "!!str", tok.String(), off)
			k.Style = yaml.DoubleQuotedStyle
			n.Content = append(n.Content, k, b.value(b.next()))
		}
	case '[':
		n := b.node(yaml.SequenceNode, "!!seq", "", off)
		for {
			tok, off := b.next()
			if tok.Kind() == ']' {
				return n
			}
			n.Content = append(n.Content, b.value(tok, off))
		}
	case '"':
		n := b.node(yaml.ScalarNode, "!!str", tok.String(), off)
		n.Style = yaml.DoubleQuotedStyle
		return n
	case '0':
		t := tok.String() // the number as written
		tag := "!!int"
		if strings.ContainsAny(t, ".eE") {
			tag = "!!float"
		}
		return b.node(yaml.ScalarNode, tag, t, off)
	case 't', 'f':
		return b.node(yaml.ScalarNode, "!!bool", strconv.FormatBool(tok.Bool()), off)
	case 'n':
		return b.node(yaml.ScalarNode, "!!null", "null", off)
	}
	b.p.failPos(Pos{File: b.p.file}, "", fmt.Sprintf("invalid JSON: unexpected token %v", tok))
	return nil
}

// rejectAliases fails on the first alias in document order: aliases are
// not supported, which also rules out alias-expansion bombs.
func (p *scnParser) rejectAliases(n *yaml.Node) {
	if n == nil {
		return
	}
	if n.Kind == yaml.AliasNode {
		p.fail(n, "", "YAML aliases (*%s) are not supported; write the value out", scnClip(n.Value))
	}
	for _, c := range n.Content {
		p.rejectAliases(c)
	}
}

func (p *scnParser) rejectMerge(k *yaml.Node, path string) {
	if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
		p.fail(k, path, "YAML merge keys (<<) are not supported; write the keys out")
	}
}

// scnMaxKeyInPath is the longest key, in bytes, written out in full in a
// field path; longer ones are shortened (see shortText).
const scnMaxKeyInPath = 64

// scnQuoteKey gives key quoted after a space, for "unknown key "x"", or ""
// when key is longer than scnMaxKeyInPath: the field path of the message
// shows it already, shortened, and once is enough.
func scnQuoteKey(key string) string {
	if len(key) > scnMaxKeyInPath {
		return ""
	}
	return " " + strconv.Quote(key)
}

// scnJoin appends key to field path path, escaped and shortened: keys come
// from the file and may be long or hold control characters.
func scnJoin(path, key string) string {
	key = termsafe.Short(key, scnMaxKeyInPath)
	if path == "" {
		return key
	}
	return path + "." + key
}

func scnIndex(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// entry is one key/value pair of a mapping.
type scnEntry struct {
	key  string
	k, v *yaml.Node
}

// mapping checks that n is a mapping whose keys are distinct strings out of
// allowed, and calls fn for every pair in file order. It returns the pairs
// by key.
func (p *scnParser) mapping(n *yaml.Node, path string, allowed []string, fn func(e scnEntry)) map[string]scnEntry {
	if n.Kind != yaml.MappingNode {
		p.fail(n, path, "expected a mapping with keys %s, got %s", strings.Join(allowed, ", "), scnDescribe(n))
	}
	seen := make(map[string]scnEntry, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		p.rejectMerge(k, path)
		if k.Kind != yaml.ScalarNode || !scnIsString(k) {
			p.fail(k, path, "keys must be strings, got %s (allowed keys: %s)", scnDescribe(k), strings.Join(allowed, ", "))
		}
		key := k.Value
		if prev, dup := seen[key]; dup {
			p.fail(k, scnJoin(path, key), "duplicate key%s (first at line %d:%d)", scnQuoteKey(key), prev.k.Line, prev.k.Column)
		}
		if !scnContains(allowed, key) {
			p.fail(k, scnJoin(path, key), "unknown key%s (allowed: %s)%s", scnQuoteKey(key), strings.Join(allowed, ", "), suggest.Key(key, allowed))
		}
		e := scnEntry{key, k, v}
		seen[key] = e
		if fn != nil {
			fn(e)
		}
	}
	return seen
}

func scnContains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// isString reports whether scalar n is a string: tagged !!str or quoted,
// or a plain scalar the YAML library would read as a timestamp (YAML 1.2
// has no timestamps, so it is a string there and in JSON).
func scnIsString(n *yaml.Node) bool {
	switch n.ShortTag() {
	case "!!str":
		return true
	case "!!timestamp":
		return n.Style&yaml.TaggedStyle == 0
	}
	return false
}

func (p *scnParser) str(n *yaml.Node, path string) string {
	if n.Kind != yaml.ScalarNode || !scnIsString(n) {
		p.fail(n, path, "expected a string, got %s", scnDescribe(n))
	}
	return n.Value
}

func (p *scnParser) enum(n *yaml.Node, path string, allowed []string) string {
	if n.Kind != yaml.ScalarNode || !scnIsString(n) {
		p.fail(n, path, "expected a string (one of: %s), got %s", strings.Join(allowed, ", "), scnDescribe(n))
	}
	if !scnContains(allowed, n.Value) {
		p.fail(n, path, "unknown value %q (allowed: %s)", scnClip(n.Value), strings.Join(allowed, ", "))
	}
	return n.Value
}

func (p *scnParser) boolean(n *yaml.Node, path string) bool {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
		p.fail(n, path, "expected a boolean (true or false), got %s", scnDescribe(n))
	}
	var b bool
	if err := n.Decode(&b); err != nil {
		p.fail(n, path, "expected a boolean (true or false), got %s", scnDescribe(n))
	}
	return b
}

var scnIntLikeRe = regexp.MustCompile(`^[-+]?[0-9][0-9_]*$`)

// integer reads an integer in [lo, hi]; want describes the allowed range.
func (p *scnParser) integer(n *yaml.Node, path string, lo, hi int64, want string) int64 {
	if n.Kind != yaml.ScalarNode {
		p.fail(n, path, "expected %s, got %s", want, scnDescribe(n))
	}
	switch n.ShortTag() {
	case "!!int":
		var v int64
		if err := n.Decode(&v); err != nil {
			if scnIntLikeRe.MatchString(n.Value) {
				p.fail(n, path, "%s is out of range (allowed: %s)", scnClip(n.Value), want)
			}
			p.fail(n, path, "expected %s, got %s", want, scnDescribe(n))
		}
		if v < lo || v > hi {
			p.fail(n, path, "%d is out of range (allowed: %s)", v, want)
		}
		return v
	case "!!float":
		if scnIntLikeRe.MatchString(n.Value) { // an integer too large for int64
			p.fail(n, path, "%s is out of range (allowed: %s)", scnClip(n.Value), want)
		}
	}
	p.fail(n, path, "expected %s, got %s", want, scnDescribe(n))
	return 0
}

// maxMs is the largest millisecond count that fits a time.Duration.
const scnMaxMs = math.MaxInt64 / int64(time.Millisecond)

func (p *scnParser) millis(n *yaml.Node, path string) time.Duration {
	v := p.integer(n, path, 0, scnMaxMs, fmt.Sprintf("a non-negative integer number of milliseconds, at most %d", scnMaxMs))
	return time.Duration(v) * time.Millisecond
}

func (p *scnParser) nonNeg(n *yaml.Node, path string, hi int64) int64 {
	if hi == math.MaxInt64 {
		return p.integer(n, path, 0, hi, "a non-negative integer")
	}
	return p.integer(n, path, 0, hi, fmt.Sprintf("an integer from 0 to %d", hi))
}

func (p *scnParser) seq(n *yaml.Node, path, what string, limit int) []*yaml.Node {
	if n.Kind != yaml.SequenceNode {
		p.fail(n, path, "expected a list of %s, got %s", what, scnDescribe(n))
	}
	if limit > 0 && len(n.Content) > limit {
		p.fail(n, path, "too many entries: %d (at most %d allowed)", len(n.Content), limit)
	}
	return n.Content
}

var (
	scnTopKeys = []string{"name", "description", "variant", "profile", "settings", "contextWindow", "compaction",
		"initialPrompt", "prompt", "epochMs", "provider", "modelId", "baseUrl", "sessionId",
		"seed", "random", "turns", "actions", "expect"}
	scnCompactionKeys = []string{"enabled", "succeed"}
	scnTurnKeys       = []string{"stopReason", "errorMessage", "usage", "switchModel", "durationMs", "status", "headers"}
	scnRandomKeys     = []string{"fixed"}
	scnUsageKeys      = []string{"input", "cacheRead"}
	scnActionKeys     = []string{"at", "do", "id", "enabled", "message"}
	scnExpectKeys     = []string{"events", "final"}
	scnFinalKeys      = []string{"state", "attempt", "isRetrying", "unresolvedPrompts"}

	scnVariants    = []string{"sound", "original"}
	scnStopReasons = []string{string(policy.StopReasonStop), string(policy.StopReasonLength),
		string(policy.StopReasonToolUse), string(policy.StopReasonError), string(policy.StopReasonAborted)}
	scnActionKinds = []string{"abort_retry", "abort", "set_auto_retry", "prompt", "get_state"}
	scnFinalStates = []string{"idle", "backoff", "continuing", "exhausted", "cancelled"}
)

// maxEpochMs is 9999-12-31T23:59:59.999Z.
const scnMaxEpochMs = int64(253402300799999)

// maxTokens keeps input+cacheRead from overflowing int64.
const scnMaxTokens = math.MaxInt64 / 2

func (p *scnParser) scenario(root *yaml.Node) *Scenario {
	sc := &Scenario{
		Path:          p.file,
		Variant:       scnDefaultVariant,
		Profile:       policy.DefaultProfile,
		ContextWindow: scnDefaultContextWindow,
		Compaction:    Compaction{Enabled: true, Succeed: true},
		InitialPrompt: true,
		Prompt:        scnDefaultPrompt,
		EpochMs:       scnDefaultEpochMs,
		Provider:      scnDefaultProvider,
		ModelID:       scnDefaultModelID,
		BaseURL:       scnDefaultBaseURL,
		SessionID:     scnDefaultSessionID,
		Seed:          scnDefaultSeed,
	}
	if p.file != "" {
		base := filepath.Base(p.file)
		sc.Name = strings.TrimSuffix(base, filepath.Ext(base))
	}
	src := &scnSource{}
	prof, _ := policy.ProfileByName(policy.DefaultProfile)
	var settings *yaml.Node // read once the profile is known
	p.mapping(root, "", scnTopKeys, func(e scnEntry) {
		path, v := e.key, e.v
		switch e.key {
		case "name":
			sc.Name = p.str(v, path)
		case "description":
			sc.Description = p.str(v, path)
		case "variant":
			sc.Variant = p.enum(v, path, scnVariants)
			src.variant = p.pos(v)
		case "profile":
			name := p.str(v, path)
			var err error
			if prof, err = policy.ProfileByName(name); err != nil || name == "" {
				p.fail(v, path, "unknown profile %q (allowed: %s)", scnClip(name), strings.Join(scnProfileNames(), ", "))
			}
			sc.Profile = prof.Name
			src.profile = p.pos(v)
		case "settings":
			settings = v
			src.settings = p.pos(v)
		case "contextWindow":
			sc.ContextWindow = p.nonNeg(v, path, math.MaxInt64)
		case "compaction":
			p.mapping(v, path, scnCompactionKeys, func(e scnEntry) {
				switch e.key {
				case "enabled":
					sc.Compaction.Enabled = p.boolean(e.v, scnJoin(path, e.key))
				case "succeed":
					sc.Compaction.Succeed = p.boolean(e.v, scnJoin(path, e.key))
				}
			})
		case "initialPrompt":
			sc.InitialPrompt = p.boolean(v, path)
		case "prompt":
			sc.Prompt = p.str(v, path)
		case "epochMs":
			sc.EpochMs = p.nonNeg(v, path, scnMaxEpochMs)
		case "provider":
			sc.Provider = p.str(v, path)
		case "modelId":
			sc.ModelID = p.str(v, path)
		case "baseUrl":
			sc.BaseURL = p.str(v, path)
		case "sessionId":
			sc.SessionID = p.str(v, path)
		case "seed":
			sc.Seed = p.integer(v, path, 1, math.MaxInt64, fmt.Sprintf("an integer from 1 to %d", int64(math.MaxInt64)))
		case "random":
			fields := p.mapping(v, path, scnRandomKeys, func(e scnEntry) {
				sc.RandomFixed = p.unitNumber(e.v, scnJoin(path, e.key))
				sc.HasRandomFixed = true
			})
			if _, ok := fields["fixed"]; !ok {
				p.fail(v, scnJoin(path, "fixed"), "missing required key (a number from 0 to 1, 1 excluded: every random draw)")
			}
		case "turns":
			items := p.seq(v, path, "turns", scnMaxEntries)
			sc.Turns = make([]Turn, 0, len(items))
			for i, item := range items {
				sc.Turns = append(sc.Turns, p.turn(item, scnIndex(path, i)))
			}
		case "actions":
			items := p.seq(v, path, "actions", scnMaxEntries)
			sc.Actions = make([]Action, 0, len(items))
			for i, item := range items {
				sc.Actions = append(sc.Actions, p.action(item, scnIndex(path, i)))
			}
		case "expect":
			sc.Expect = p.expect(v, path)
		}
	})
	if src.profile != (Pos{}) || src.variant != (Pos{}) || src.settings != (Pos{}) {
		sc.src = src
	}
	if sc.Variant == "original" && sc.Profile != policy.DefaultProfile {
		p.failPos(src.profile, "profile", fmt.Sprintf("variant original allows only profile %s, not %s (the original has no other policy)",
			policy.DefaultProfile, sc.Profile))
	}
	sc.Settings = prof.Settings
	if settings != nil {
		sc.SettingsPatch, sc.Settings = p.settingsPatch(settings, "settings", src, prof.Settings)
	}
	if err := scnCheckSettings(p.file, prof, sc.Settings, sc.src); err != nil {
		panic(scnBailout{err})
	}
	if sc.Variant == "original" {
		if err := scnOriginalSettings(sc); err != nil {
			panic(scnBailout{err})
		}
	}
	return sc
}

// scnProfileNames lists the profiles' names, the default first.
func scnProfileNames() []string {
	ps := policy.Profiles()
	names := make([]string, len(ps))
	for i, pr := range ps {
		names[i] = pr.Name
	}
	return names
}

func (p *scnParser) turn(n *yaml.Node, path string) Turn {
	t := Turn{Pos: p.pos(n)}
	fields := p.mapping(n, path, scnTurnKeys, func(e scnEntry) {
		fp := scnJoin(path, e.key)
		switch e.key {
		case "stopReason":
			t.StopReason = policy.StopReason(p.enum(e.v, fp, scnStopReasons))
		case "errorMessage":
			t.ErrorMessage = p.str(e.v, fp)
		case "usage":
			p.mapping(e.v, fp, scnUsageKeys, func(u scnEntry) {
				switch u.key {
				case "input":
					t.Usage.Input = p.nonNeg(u.v, scnJoin(fp, u.key), scnMaxTokens)
				case "cacheRead":
					t.Usage.CacheRead = p.nonNeg(u.v, scnJoin(fp, u.key), scnMaxTokens)
				}
			})
		case "switchModel":
			t.SwitchModel = p.boolean(e.v, fp)
		case "durationMs":
			t.Duration = p.millis(e.v, fp)
		case "status":
			t.Status = int(p.integer(e.v, fp, 100, 599, "an HTTP status code, an integer from 100 to 599"))
		case "headers":
			t.Headers = p.headers(e.v, fp)
		}
	})
	if _, ok := fields["stopReason"]; !ok {
		p.fail(n, scnJoin(path, "stopReason"), "missing required key (one of: %s)", strings.Join(scnStopReasons, ", "))
	}
	return t
}

// headers reads a turn's "headers": a mapping of header names, lower-case
// HTTP tokens (policy.AssistantMessage.ValidateHTTP), to strings; nil when
// empty.
func (p *scnParser) headers(n *yaml.Node, path string) map[string]string {
	if n.Kind != yaml.MappingNode {
		p.fail(n, path, "expected a mapping of header names (lower-case) to strings, got %s", scnDescribe(n))
	}
	h := make(map[string]string, len(n.Content)/2)
	at := make(map[string]*yaml.Node, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		p.rejectMerge(k, path)
		if k.Kind != yaml.ScalarNode || !scnIsString(k) {
			p.fail(k, path, "header names must be strings, got %s", scnDescribe(k))
		}
		name, fp := k.Value, scnJoin(path, k.Value)
		if prev, dup := at[name]; dup {
			p.fail(k, fp, "duplicate header%s (first at line %d:%d)", scnQuoteKey(name), prev.Line, prev.Column)
		}
		at[name] = k
		if err := (policy.AssistantMessage{Headers: map[string]string{name: ""}}).ValidateHTTP(); err != nil {
			msg := strings.TrimPrefix(err.Error(), "headers: ")
			if len(name) > scnMaxKeyInPath { // the field path shows it, shortened
				msg = "invalid header name (a name is lower-case letters, digits and !#$%&'*+-.^_`|~)"
			}
			p.fail(k, fp, "%s", msg)
		}
		if v.Kind != yaml.ScalarNode || !scnIsString(v) {
			hint := ""
			switch {
			case v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null":
				hint = ` (write "" for an empty value)`
			case v.Kind == yaml.ScalarNode:
				hint = fmt.Sprintf(" (quote it: %s)", jsonw.AppendString(nil, scnClip(v.Value)))
			}
			p.fail(v, fp, "expected a string, got %s%s", scnDescribe(v), hint)
		}
		h[name] = v.Value
	}
	if len(h) == 0 {
		return nil
	}
	return h
}

// unitNumber reads a number in [0, 1).
func (p *scnParser) unitNumber(n *yaml.Node, path string) float64 {
	const want = "a number from 0 to 1, 1 excluded"
	if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!int" && n.ShortTag() != "!!float") || scnIsString(n) {
		p.fail(n, path, "expected %s, got %s", want, scnDescribe(n))
	}
	var f float64
	if err := n.Decode(&f); err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		p.fail(n, path, "expected %s, got %s", want, scnDescribe(n))
	}
	if f < 0 || f >= 1 {
		p.fail(n, path, "%s is out of range (allowed: %s)", scnClip(n.Value), want)
	}
	return f
}

func (p *scnParser) action(n *yaml.Node, path string) Action {
	a := Action{Pos: p.pos(n)}
	fields := p.mapping(n, path, scnActionKeys, func(e scnEntry) {
		fp := scnJoin(path, e.key)
		switch e.key {
		case "at":
			a.At = p.millis(e.v, fp)
		case "do":
			a.Do = p.enum(e.v, fp, scnActionKinds)
		case "id":
			a.ID = p.str(e.v, fp)
		case "enabled":
			b := p.boolean(e.v, fp)
			a.Enabled = &b
		case "message":
			a.Message = p.str(e.v, fp)
		}
	})
	if _, ok := fields["at"]; !ok {
		p.fail(n, scnJoin(path, "at"), "missing required key (a non-negative integer number of milliseconds)")
	}
	if _, ok := fields["do"]; !ok {
		p.fail(n, scnJoin(path, "do"), "missing required key (one of: %s)", strings.Join(scnActionKinds, ", "))
	}
	if e, ok := fields["enabled"]; ok && a.Do != "set_auto_retry" {
		p.fail(e.k, scnJoin(path, "enabled"), "not allowed for do: %s (only for set_auto_retry)", a.Do)
	}
	if _, ok := fields["enabled"]; !ok && a.Do == "set_auto_retry" {
		p.fail(n, scnJoin(path, "enabled"), "missing required key for do: set_auto_retry (true or false)")
	}
	if e, ok := fields["message"]; ok && a.Do != "prompt" {
		p.fail(e.k, scnJoin(path, "message"), "not allowed for do: %s (only for prompt)", a.Do)
	}
	return a
}

func (p *scnParser) expect(n *yaml.Node, path string) *Expect {
	x := &Expect{}
	p.mapping(n, path, scnExpectKeys, func(e scnEntry) {
		fp := scnJoin(path, e.key)
		switch e.key {
		case "events":
			items := p.seq(e.v, fp, "event objects", 0)
			x.Events = make([]ExpectEvent, 0, len(items))
			for i, item := range items {
				x.Events = append(x.Events, p.event(item, scnIndex(fp, i)))
			}
		case "final":
			x.Final = p.final(e.v, fp)
		}
	})
	return x
}

func (p *scnParser) event(n *yaml.Node, path string) ExpectEvent {
	if n.Kind != yaml.MappingNode {
		p.fail(n, path, "expected a mapping of trace fields, got %s", scnDescribe(n))
	}
	ev := ExpectEvent{Fields: make(map[string]any, len(n.Content)/2), Pos: p.pos(n)}
	ev.Keys, _ = p.object(n, path, ev.Fields, 1)
	p.checkEvent(n, path, ev.Fields)
	return ev
}

// checkEvent validates an expected event against the trace's schema
// (package trace): a known type, fields of that type (of some type when
// none is given), values of the field's kind. Nested objects are checked
// the same way; a listed subset of fields is fine.
func (p *scnParser) checkEvent(n *yaml.Node, path string, fields map[string]any) {
	typ := trace.Type(0)
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k, v := n.Content[i], n.Content[i+1]; k.Value == "type" {
			name, ok := fields["type"].(string)
			if !ok {
				p.fail(v, scnJoin(path, "type"), "expected the name of a trace line type, got %s (allowed: %s)", scnDescribe(v), trace.TypeNames())
			}
			if typ, ok = trace.ParseType(name); !ok {
				p.fail(v, scnJoin(path, "type"), "unknown trace line type %q (allowed: %s)", termsafe.Short(name, scnMaxKeyInPath), trace.TypeNames())
			}
		}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		fp := scnJoin(path, k.Value)
		if typ != 0 {
			f, ok := trace.Lookup(typ, k.Value)
			if !ok {
				p.fail(k, fp, "unknown field for type %s (allowed: %s)", typ, trace.Names(trace.Fields(typ)))
			}
			p.checkValue(v, fp, f, fields[k.Value])
			continue
		}
		// No type: the field of some type, with a value of its kind.
		var first *trace.Field
		matched := false
		for _, t := range trace.Types() {
			if f, ok := trace.Lookup(t, k.Value); ok {
				if first == nil {
					first = f
				}
				if p.valueFits(f, fields[k.Value]) {
					matched = true
					break
				}
			}
		}
		switch {
		case first == nil:
			p.fail(k, fp, "no trace line has this field (give \"type\" to check the fields of one type)")
		case !matched:
			p.checkValue(v, fp, first, fields[k.Value])
		}
	}
}

// checkValue fails unless value (from node v) is of field f's kind.
func (p *scnParser) checkValue(v *yaml.Node, path string, f *trace.Field, value any) {
	if f.Kind == trace.KindObject {
		m, ok := value.(map[string]any)
		if !ok {
			p.fail(v, path, "expected %s (the fields %s), got %s", f.Kind, trace.Names(f.Fields), scnDescribe(v))
		}
		for i := 0; i+1 < len(v.Content); i += 2 {
			k, sv := v.Content[i], v.Content[i+1]
			sub, ok := f.Sub(k.Value)
			if !ok {
				p.fail(k, scnJoin(path, k.Value), "unknown field of %s (allowed: %s)", f.Name, trace.Names(f.Fields))
			}
			p.checkValue(sv, scnJoin(path, k.Value), sub, m[k.Value])
		}
		return
	}
	if !p.valueFits(f, value) {
		p.fail(v, path, "expected %s, got %s", f.Kind, scnDescribe(v))
	}
}

// valueFits reports whether value is of field f's kind (objects: any
// mapping; checkValue looks inside).
func (p *scnParser) valueFits(f *trace.Field, value any) bool {
	switch f.Kind {
	case trace.KindString:
		_, ok := value.(string)
		return ok
	case trace.KindNumber:
		_, ok := value.(float64)
		return ok
	case trace.KindNumberOrNull:
		_, ok := value.(float64)
		return ok || value == nil
	case trace.KindBool:
		_, ok := value.(bool)
		return ok
	case trace.KindNumbers:
		xs, ok := value.([]any)
		for _, x := range xs {
			if _, isNum := x.(float64); !isNum {
				return false
			}
		}
		return ok
	case trace.KindObject:
		_, ok := value.(map[string]any)
		return ok
	}
	return false
}

// object fills dst from mapping n (keys must be distinct strings) and returns
// the keys in file order.
func (p *scnParser) object(n *yaml.Node, path string, dst map[string]any, depth int) ([]string, map[string]any) {
	keys := make([]string, 0, len(n.Content)/2)
	at := make(map[string]*yaml.Node, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		p.rejectMerge(k, path)
		if k.Kind != yaml.ScalarNode || !scnIsString(k) {
			p.fail(k, path, "keys must be strings, got %s", scnDescribe(k))
		}
		if prev, dup := at[k.Value]; dup {
			p.fail(k, scnJoin(path, k.Value), "duplicate key%s (first at line %d:%d)", scnQuoteKey(k.Value), prev.Line, prev.Column)
		}
		at[k.Value] = k
		keys = append(keys, k.Value)
		dst[k.Value] = p.jsonValue(v, scnJoin(path, k.Value), depth+1)
	}
	return keys, dst
}

// jsonValue converts n to a JSON-typed Go value.
func (p *scnParser) jsonValue(n *yaml.Node, path string, depth int) any {
	if depth > scnMaxValueDepth {
		p.fail(n, path, "value nested more than %d levels deep", scnMaxValueDepth)
	}
	switch n.Kind {
	case yaml.MappingNode:
		_, m := p.object(n, path, make(map[string]any, len(n.Content)/2), depth)
		return m
	case yaml.SequenceNode:
		list := make([]any, 0, len(n.Content))
		for i, c := range n.Content {
			list = append(list, p.jsonValue(c, scnIndex(path, i), depth+1))
		}
		return list
	case yaml.ScalarNode:
		if scnIsString(n) {
			return n.Value
		}
		switch n.ShortTag() {
		case "!!null":
			return nil
		case "!!bool":
			return p.boolean(n, path)
		case "!!int", "!!float":
			var f float64
			if err := n.Decode(&f); err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				p.fail(n, path, "expected a JSON value (string, finite number, boolean, null, list or mapping), got %s", scnDescribe(n))
			}
			return f
		}
	}
	p.fail(n, path, "expected a JSON value (string, finite number, boolean, null, list or mapping), got %s", scnDescribe(n))
	return nil
}

func (p *scnParser) final(n *yaml.Node, path string) *ExpectFinal {
	f := &ExpectFinal{Pos: p.pos(n)}
	p.mapping(n, path, scnFinalKeys, func(e scnEntry) {
		fp := scnJoin(path, e.key)
		switch e.key {
		case "state":
			s := p.enum(e.v, fp, scnFinalStates)
			f.State = &s
		case "attempt":
			a := int(p.nonNeg(e.v, fp, math.MaxInt32))
			f.Attempt = &a
		case "isRetrying":
			b := p.boolean(e.v, fp)
			f.IsRetrying = &b
		case "unresolvedPrompts":
			items := p.seq(e.v, fp, "non-negative integers", 0)
			f.HasUnresolved = true
			f.UnresolvedPrompts = make([]int, 0, len(items))
			for i, item := range items {
				f.UnresolvedPrompts = append(f.UnresolvedPrompts, int(p.nonNeg(item, scnIndex(fp, i), math.MaxInt32)))
			}
		}
	})
	return f
}

// describe names what a node is, for "got ..." in messages.
func scnDescribe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.DocumentNode:
		return "a document"
	case yaml.ScalarNode:
		switch tag := n.ShortTag(); tag {
		case "!!str":
			return fmt.Sprintf("string %q", scnClip(n.Value))
		case "!!int":
			return "integer " + scnClip(n.Value)
		case "!!float":
			return "float " + scnClip(n.Value)
		case "!!bool":
			return "boolean " + scnClip(n.Value)
		case "!!null":
			return "null"
		case "!!timestamp":
			if scnIsString(n) {
				return fmt.Sprintf("string %q", scnClip(n.Value))
			}
			return "timestamp " + scnClip(n.Value)
		default:
			return fmt.Sprintf("a value tagged %s", scnClip(tag))
		}
	}
	return "nothing"
}

// clip shortens long values quoted in messages.
func scnClip(s string) string {
	const max = 60
	if len(s) <= max {
		return s
	}
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	return string(r[:max]) + "..."
}
