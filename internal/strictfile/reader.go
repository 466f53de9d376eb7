// Package strictfile is the one strict reader of the project's files
// (scenario files, fleet files, proxy scripts): one YAML or JSON document decoded into
// yaml.Node trees with positions, syntax errors placed at their line and
// column, aliases and merge keys refused, and typed reads of mappings,
// strings, enumerations, booleans, integers and numbers whose errors say
// where (file:line:col and the key path), what was found and what is
// allowed. The domain (which keys, which ranges) is the caller's.
//
// A Reader stops at the first error: its methods panic with it, and Read
// turns that back into an *Error; any other panic goes on.
package strictfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/ohmypi/retryfsm/internal/suggest"
	"github.com/ohmypi/retryfsm/internal/termsafe"
)

// Pos is a position in a file. Line and Column are 1-based (the column
// in characters); 0 means unknown.
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

// Error is the first problem a Reader found: where, the key path (""
// for the whole file; keys from the file escaped and shortened), what is
// wrong and allowed, and the underlying error, if any.
type Error struct {
	Pos   Pos
	Field string
	Msg   string
	Err   error
}

// Error gives "file:3:14: field: msg", leaving out the parts that are
// empty.
func (e *Error) Error() string {
	parts := make([]string, 0, 3)
	if s := e.Pos.String(); s != "" {
		parts = append(parts, s)
	}
	if e.Field != "" {
		parts = append(parts, e.Field)
	}
	return strings.Join(append(parts, e.Msg), ": ")
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Reader reads one file. File names it in positions; What names its kind
// in messages ("scenario": "a mapping with the scenario keys"); At, when
// not nil, gets the value node of every key path Mapping reads (to place
// errors found later, by a validation of the whole).
type Reader struct {
	File string
	What string
	At   map[string]*yaml.Node
	// Top, when not empty, is the error for a top level that is not a
	// mapping, followed by ", got" what it is (by default "the top level
	// must be a mapping with the What keys").
	Top string
	// UnknownAtMapping gives an unknown key's error the field path of
	// its mapping ("faults[0]: unknown key "x"") rather than its own
	// ("faults[0].x: unknown key "x"").
	UnknownAtMapping bool
}

// bailout carries a Reader's first error out of the caller's walk.
type bailout struct{ err *Error }

// Read runs fn, the reading of the file, and returns the first error a
// method of r failed with, or nil.
func (r *Reader) Read(fn func()) (err *Error) {
	defer func() {
		if v := recover(); v != nil {
			b, ok := v.(bailout)
			if !ok {
				panic(v) // a bug, not a file error
			}
			err = b.err
		}
	}()
	fn()
	return nil
}

// FailErr stops the reading with an error at pos, for key path field,
// wrapping err (nil for none).
func (r *Reader) FailErr(pos Pos, field, msg string, err error) {
	panic(bailout{&Error{Pos: pos, Field: ShortPath(field), Msg: msg, Err: err}})
}

// FailPos stops the reading with an error at pos, for key path field.
func (r *Reader) FailPos(pos Pos, field, msg string) { r.FailErr(pos, field, msg, nil) }

// Fail stops the reading with an error at node n, for key path field.
func (r *Reader) Fail(n *yaml.Node, field, format string, args ...any) {
	r.FailPos(r.Pos(n), field, fmt.Sprintf(format, args...))
}

// Pos is node n's position (the file's alone for nil).
func (r *Reader) Pos(n *yaml.Node) Pos {
	if n == nil {
		return Pos{File: r.File}
	}
	return Pos{File: r.File, Line: n.Line, Column: n.Column}
}

// PosOf is where key path field, or the nearest parent of it that
// Mapping read, is (needs At).
func (r *Reader) PosOf(field string) Pos {
	for f := field; f != ""; {
		if n := r.At[f]; n != nil {
			return r.Pos(n)
		}
		i := strings.LastIndexAny(f, ".[")
		if i < 0 {
			break
		}
		f = f[:i]
	}
	return Pos{File: r.File}
}

// MaxPath bounds the length of a field path in an error, in bytes: a
// longer one (keys nested deep, each up to MaxKeyInPath) keeps its start
// and its end around a "…".
const MaxPath = 256

// ShortPath is path shortened to MaxPath bytes.
func ShortPath(path string) string {
	if len(path) <= MaxPath {
		return path
	}
	head, tail := 96, len(path)-(MaxPath-96-len("…"))
	for head > 0 && !utf8.RuneStart(path[head]) {
		head--
	}
	for tail < len(path) && !utf8.RuneStart(path[tail]) {
		tail++
	}
	return path[:head] + "…" + path[tail:]
}

// IsJSONName tells whether a file is read as JSON: by its extension.
func IsJSONName(name string) bool { return strings.HasSuffix(name, ".json") }

// Decode reads data's one document and returns its root, a mapping: as
// JSON when the file's name ends in ".json" or data is valid JSON (JSON is
// YAML, but the YAML library rejects some valid JSON: escapes such as \/
// and surrogate pairs, keys over 1024 characters), else as YAML.
func (r *Reader) Decode(data []byte) *yaml.Node {
	if IsJSONName(r.File) || json.Valid(data) {
		return r.DecodeJSON(data)
	}
	return r.DecodeYAML(data)
}

// DecodeYAML parses exactly one YAML document and returns its root node,
// a mapping without aliases.
func (r *Reader) DecodeYAML(data []byte) *yaml.Node {
	var doc yaml.Node
	// The Decoder reads the first document and then checks for what follows
	// it: yaml.Unmarshal stops after the first document's node and accepts
	// any text after it (" a: 1\nb: 2" read as {a: 1}).
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			r.FailPos(Pos{File: r.File}, "", "empty file: expected a mapping with the "+r.What+" keys")
		}
		r.yamlSyntaxError(data, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		n := &extra
		if len(extra.Content) > 0 && extra.Content[0].Line > 0 {
			n = extra.Content[0]
		}
		r.Fail(n, "", "more than one YAML document in the file (only one %s per file is allowed)", r.What)
	} else if !errors.Is(err, io.EOF) {
		r.yamlSyntaxError(data, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0] == nil {
		r.Fail(&doc, "", "empty document: expected a mapping with the %s keys", r.What)
	}
	root := doc.Content[0]
	r.rejectAliases(root)
	r.checkRoot(root)
	return root
}

func (r *Reader) checkRoot(root *yaml.Node) {
	if root.Kind == yaml.ScalarNode && root.Value == "" && root.ShortTag() == "!!null" && root.Style&yaml.TaggedStyle == 0 {
		r.Fail(root, "", "empty document: expected a mapping with the %s keys", r.What)
	}
	if root.Kind != yaml.MappingNode {
		top := r.Top
		if top == "" {
			top = "the top level must be a mapping with the " + r.What + " keys"
		}
		r.Fail(root, "", "%s, got %s", top, Describe(root))
	}
}

// rejectAliases fails on the first alias in document order: aliases are
// not supported, which also rules out alias-expansion bombs.
func (r *Reader) rejectAliases(n *yaml.Node) {
	if n == nil {
		return
	}
	if n.Kind == yaml.AliasNode {
		r.Fail(n, "", "YAML aliases (*%s) are not supported; write the value out", Clip(n.Value))
	}
	for _, c := range n.Content {
		r.rejectAliases(c)
	}
}

// RejectMerge fails on a merge key (<<), k a key of the mapping at path.
func (r *Reader) RejectMerge(k *yaml.Node, path string) {
	if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
		r.Fail(k, path, "YAML merge keys (<<) are not supported; write the keys out")
	}
}

// MaxKeyInPath is the longest key, in bytes, written out in full in a
// field path; longer ones are shortened (termsafe.Short).
const MaxKeyInPath = 64

// QuoteKey gives key quoted after a space, for "unknown key "x"", or ""
// when key is longer than MaxKeyInPath: the field path of the message
// shows it already, shortened, and once is enough.
func QuoteKey(key string) string {
	if len(key) > MaxKeyInPath {
		return ""
	}
	return " " + strconv.Quote(key)
}

// Join appends key to field path path, escaped and shortened: keys come
// from the file and may be long or hold control characters.
func Join(path, key string) string {
	key = termsafe.Short(key, MaxKeyInPath)
	if path == "" {
		return key
	}
	return path + "." + key
}

// Index is the field path of item i of the list at path.
func Index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// Entry is one key/value pair of a mapping.
type Entry struct {
	Key  string
	K, V *yaml.Node
}

// Mapping checks that n is a mapping whose keys are distinct strings out
// of allowed, and calls fn (when not nil) for every pair in file order.
// It returns the pairs by key.
func (r *Reader) Mapping(n *yaml.Node, path string, allowed []string, fn func(e Entry)) map[string]Entry {
	if n.Kind != yaml.MappingNode {
		r.Fail(n, path, "expected a mapping with keys %s, got %s", strings.Join(allowed, ", "), Describe(n))
	}
	seen := make(map[string]Entry, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		r.RejectMerge(k, path)
		if k.Kind != yaml.ScalarNode || !IsString(k) {
			r.Fail(k, path, "keys must be strings, got %s (allowed keys: %s)", Describe(k), strings.Join(allowed, ", "))
		}
		key := k.Value
		if prev, dup := seen[key]; dup {
			r.Fail(k, Join(path, key), "duplicate key%s (first at line %d:%d)", QuoteKey(key), prev.K.Line, prev.K.Column)
		}
		if !Contains(allowed, key) {
			field := Join(path, key)
			if r.UnknownAtMapping {
				field = path
			}
			r.Fail(k, field, "unknown key%s (allowed: %s)%s", QuoteKey(key), strings.Join(allowed, ", "), suggest.Key(key, allowed))
		}
		e := Entry{key, k, v}
		seen[key] = e
		if r.At != nil {
			r.At[Join(path, key)] = v
		}
		if fn != nil {
			fn(e)
		}
	}
	return seen
}

// Contains reports whether list holds s.
func Contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// IsString reports whether scalar n is a string: tagged !!str or quoted,
// or a plain scalar the YAML library would read as a timestamp (YAML 1.2
// has no timestamps, so it is a string there and in JSON).
func IsString(n *yaml.Node) bool {
	switch n.ShortTag() {
	case "!!str":
		return true
	case "!!timestamp":
		return n.Style&yaml.TaggedStyle == 0
	}
	return false
}

// Scalar is a scalar's text, whatever its tag but null.
func (r *Reader) Scalar(n *yaml.Node, path string) string {
	if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
		r.Fail(n, path, "expected a value, got %s", Describe(n))
	}
	return n.Value
}

// Str is a string.
func (r *Reader) Str(n *yaml.Node, path string) string {
	if n.Kind != yaml.ScalarNode || !IsString(n) {
		r.Fail(n, path, "expected a string, got %s", Describe(n))
	}
	return n.Value
}

// Enum is a string out of allowed.
func (r *Reader) Enum(n *yaml.Node, path string, allowed []string) string {
	if n.Kind != yaml.ScalarNode || !IsString(n) {
		r.Fail(n, path, "expected a string (one of: %s), got %s", strings.Join(allowed, ", "), Describe(n))
	}
	if !Contains(allowed, n.Value) {
		r.Fail(n, path, "unknown value %q (allowed: %s)", Clip(n.Value), strings.Join(allowed, ", "))
	}
	return n.Value
}

// Boolean is true or false.
func (r *Reader) Boolean(n *yaml.Node, path string) bool {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
		r.Fail(n, path, "expected a boolean (true or false), got %s", Describe(n))
	}
	var b bool
	if err := n.Decode(&b); err != nil {
		r.Fail(n, path, "expected a boolean (true or false), got %s", Describe(n))
	}
	return b
}

var intLikeRe = regexp.MustCompile(`^[-+]?[0-9][0-9_]*$`)

// Integer is an integer in [lo, hi]; want describes the allowed range
// ("an integer from 1 to 10"). An integer out of range is quoted as
// written.
func (r *Reader) Integer(n *yaml.Node, path string, lo, hi int64, want string) int64 {
	if n.Kind != yaml.ScalarNode {
		r.Fail(n, path, "expected %s, got %s", want, Describe(n))
	}
	switch n.ShortTag() {
	case "!!int":
		var v int64
		if err := n.Decode(&v); err != nil {
			if intLikeRe.MatchString(n.Value) {
				r.Fail(n, path, "%s is out of range (allowed: %s)", Clip(n.Value), want)
			}
			r.Fail(n, path, "expected %s, got %s", want, Describe(n))
		}
		if v < lo || v > hi {
			r.Fail(n, path, "%d is out of range (allowed: %s)", v, want)
		}
		return v
	case "!!float":
		if intLikeRe.MatchString(n.Value) { // an integer too large for int64
			r.Fail(n, path, "%s is out of range (allowed: %s)", Clip(n.Value), want)
		}
	}
	r.Fail(n, path, "expected %s, got %s", want, Describe(n))
	return 0
}

// Number is a finite number (an integer or a float).
func (r *Reader) Number(n *yaml.Node, path string) float64 {
	var v float64
	if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!int" && n.ShortTag() != "!!float") || n.Decode(&v) != nil ||
		math.IsNaN(v) || math.IsInf(v, 0) {
		r.Fail(n, path, "expected a number, got %s", Describe(n))
	}
	return v
}

// Seq is a list of what, at most limit items (0: no bound).
func (r *Reader) Seq(n *yaml.Node, path, what string, limit int) []*yaml.Node {
	if n.Kind != yaml.SequenceNode {
		r.Fail(n, path, "expected a list of %s, got %s", what, Describe(n))
	}
	if limit > 0 && len(n.Content) > limit {
		r.Fail(n, path, "too many entries: %d (at most %d allowed)", len(n.Content), limit)
	}
	return n.Content
}

// Describe names what a node is, for "got ..." in messages.
func Describe(n *yaml.Node) string {
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
			return fmt.Sprintf("string %q", Clip(n.Value))
		case "!!int":
			return "integer " + Clip(n.Value)
		case "!!float":
			return "float " + Clip(n.Value)
		case "!!bool":
			return "boolean " + Clip(n.Value)
		case "!!null":
			return "null"
		case "!!timestamp":
			if IsString(n) {
				return fmt.Sprintf("string %q", Clip(n.Value))
			}
			return "timestamp " + Clip(n.Value)
		default:
			return "a value tagged " + clipTag(tag)
		}
	}
	return "nothing"
}

// clipTag is a YAML tag as a message quotes it: clipped, and quoted when
// it holds a control character (a verbatim tag may hold a line break,
// which would split the one-line message).
func clipTag(tag string) string {
	if strings.IndexFunc(tag, unicode.IsControl) >= 0 {
		return strconv.Quote(Clip(tag))
	}
	return Clip(tag)
}

// Clip shortens long values quoted in messages.
func Clip(s string) string {
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
