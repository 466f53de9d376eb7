package proxy

import (
	"bytes"
	"io"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// rawRequest is what parseRequest reads of a body, before its checks:
// the model, stream, and the first tool's two names.
type rawRequest struct {
	Model  string     `json:"model"`
	Stream bool       `json:"stream"`
	Tools  []toolName `json:"tools"`
}

// scanner is a pooled token scanner over one body.
type scanner struct {
	dec  jsontext.Decoder
	buf  bytes.Buffer // the body, read in place
	name []byte       // an escaped name, unescaped
	bad  bool         // a name could not be read
	// model is the last model read (at most MaxNameBytes): the next
	// request's, most likely.
	model string
	// last is a copy of the last body read whole (at most
	// maxCachedBody bytes), lastRaw what was read of it: a retry sends
	// the same bytes again, read then without the decoder.
	last    []byte
	lastRaw rawRequest
}

var scanners = sync.Pool{New: func() any { return new(scanner) }}

// allowDuplicates: a name given twice is read twice, the later winning,
// as json.Unmarshal reads it.
var allowDuplicates = jsontext.AllowDuplicateNames(true)

// The names read, matched in any case (bytes.EqualFold), as
// json.Unmarshal matches a field's name.
var (
	modelName    = []byte("model")
	streamName   = []byte("stream")
	toolsName    = []byte("tools")
	nameName     = []byte("name")
	functionName = []byte("function")
)

// scanRequest reads what parseRequest needs of body with jsontext's token
// scanner: no reflection, the whole body checked, the model its one
// allocation. It reads as json.Unmarshal reads into rawRequest (names
// matched in any case, a later one winning, null leaving a field as it
// is, null or [] emptying tools, a later tools array's first element
// read over the earlier's); ok is false for anything else (a syntax
// error, invalid UTF-8, a field of another kind, not an object), which
// json.Unmarshal then reads, for its error. FuzzParseRequest holds the
// two equal. A body equal byte for byte to the last one the pooled
// scanner read (a retry's, or the same request from another client) is
// what was read of that one, without the decoder: the reading is a
// function of the bytes (TestScanRequestAgain).
func scanRequest(body []byte) (raw rawRequest, ok bool) {
	s := scanners.Get().(*scanner)
	if s.last != nil && bytes.Equal(body, s.last) {
		raw = s.lastRaw
		scanners.Put(s) // its decoder not used: nothing to release
		return raw, true
	}
	defer s.release()
	raw, ok = s.scan(body)
	if ok && len(body) <= maxCachedBody {
		s.last, s.lastRaw = append(s.last[:0], body...), raw
	}
	return raw, ok
}

// maxCachedBody is the largest body a pooled scanner keeps a copy of.
const maxCachedBody = 64 << 10

// scan is scanRequest's reading of body by the decoder.
func (s *scanner) scan(body []byte) (raw rawRequest, ok bool) {
	s.buf = *bytes.NewBuffer(body)
	s.dec.Reset(&s.buf, allowDuplicates)
	s.bad = false
	var first toolName // tools[0], when tools has one
	var tools bool
	members := s.members(func(name []byte) bool {
		switch {
		case bytes.EqualFold(name, modelName):
			return s.str(&raw.Model, &s.model)
		case bytes.EqualFold(name, streamName):
			return s.bool(&raw.Stream)
		case bytes.EqualFold(name, toolsName):
			return s.tools(&first, &tools)
		}
		return s.skip()
	})
	if !members || !s.atEnd(len(body)) {
		return raw, false
	}
	if tools {
		raw.Tools = []toolName{first}
	}
	return raw, true
}

// maxPooledName is the largest unescaped-name buffer a pooled scanner
// keeps: a body with a huge escaped name is not held on to.
const maxPooledName = 1 << 10

// release gives s back to the pool holding no body but its copy of the
// last one (at most maxCachedBody), nor a large name buffer.
func (s *scanner) release() {
	s.buf = bytes.Buffer{}
	s.dec.Reset(&s.buf)
	if cap(s.name) > maxPooledName {
		s.name = nil
	}
	scanners.Put(s)
}

// atEnd reports whether nothing but whitespace follows the object, to
// the body's n bytes: a further ReadToken's io.EOF, read from the unread
// buffer (which holds the rest of the body) without its cost.
func (s *scanner) atEnd(n int) bool {
	rest := s.dec.UnreadBuffer()
	if s.dec.InputOffset()+int64(len(rest)) != int64(n) {
		_, err := s.dec.ReadToken()
		return err == io.EOF
	}
	for _, c := range rest {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}

// tools reads the tools array (or null: none) over *first, its first
// element when *has.
func (s *scanner) tools(first *toolName, has *bool) bool {
	switch s.dec.PeekKind() {
	case 'n':
		*first, *has = toolName{}, false
		return s.null()
	case '[':
	default:
		return false
	}
	if _, err := s.dec.ReadToken(); err != nil {
		return false
	}
	t := *first // a later array's first element is read over the earlier's
	if !*has {
		t = toolName{}
	}
	n := 0
	for ; s.dec.PeekKind() != ']'; n++ {
		if n == 0 {
			if !s.tool(&t) {
				return false
			}
			continue
		}
		var rest toolName
		if !s.tool(&rest) {
			return false
		}
	}
	if _, err := s.dec.ReadToken(); err != nil {
		return false
	}
	*first, *has = t, n > 0
	if n == 0 {
		*first = toolName{}
	}
	return true
}

// tool reads a tools element over t: an object with name and
// function.name, or null (t as it was).
func (s *scanner) tool(t *toolName) bool {
	return s.objectOrNull(func(name []byte) bool {
		switch {
		case bytes.EqualFold(name, nameName):
			return s.str(&t.Name, nil)
		case bytes.EqualFold(name, functionName):
			return s.function(t)
		}
		return s.skip()
	})
}

// function reads a tool's function (its name) over t, or null.
func (s *scanner) function(t *toolName) bool {
	return s.objectOrNull(func(name []byte) bool {
		if bytes.EqualFold(name, nameName) {
			return s.str(&t.Function.Name, nil)
		}
		return s.skip()
	})
}

// objectOrNull reads null, or an object whose members member reads.
func (s *scanner) objectOrNull(member func(name []byte) bool) bool {
	switch s.dec.PeekKind() {
	case 'n':
		return s.null()
	case '{':
		return s.members(member)
	}
	return false
}

// members reads an object, '{' to '}', member reading each member's value
// after its name (false: stop, the read failed).
func (s *scanner) members(member func(name []byte) bool) bool {
	if !s.open() {
		return false
	}
	for {
		name, more := s.next()
		if !more {
			return s.close()
		}
		if !member(name) {
			return false
		}
	}
}

// open reads an object's '{'.
func (s *scanner) open() bool {
	tok, err := s.dec.ReadToken()
	return err == nil && tok.Kind() == '{'
}

// next reads the object's next name (unescaped; valid until the next
// read), or reports its end (more false), which close then reads. An
// error is reported as the end, and close fails.
func (s *scanner) next() (name []byte, more bool) {
	if s.dec.PeekKind() == '}' {
		return nil, false
	}
	v, err := s.dec.ReadValue()
	if err != nil || len(v) < 2 || v[0] != '"' {
		s.bad = true
		return nil, false
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return v[1 : len(v)-1], true
	}
	if s.name, err = jsontext.AppendUnquote(s.name[:0], v); err != nil {
		s.bad = true
		return nil, false
	}
	return s.name, true
}

// close reads an object's '}' (false when a name could not be read).
func (s *scanner) close() bool {
	if s.bad {
		return false
	}
	tok, err := s.dec.ReadToken()
	return err == nil && tok.Kind() == '}'
}

// str reads a string into *v, or null (*v as it was). A string equal to
// *last is *last, not a copy (the model, request after request); last
// (when not nil) is then the string read, if a name's length at most.
func (s *scanner) str(v, last *string) bool {
	switch s.dec.PeekKind() {
	case 'n':
		return s.null()
	case '"':
	default:
		return false
	}
	raw, err := s.dec.ReadValue()
	if err != nil {
		return false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		q := raw[1 : len(raw)-1]
		switch {
		case last == nil:
			*v = string(q)
		case string(q) == *last:
			*v = *last
		default:
			*v = string(q)
			if len(q) <= MaxNameBytes {
				*last = *v
			}
		}
		return true
	}
	b, err := jsontext.AppendUnquote(nil, raw)
	*v = string(b)
	return err == nil
}

// bool reads true or false into *v, or null (*v as it was).
func (s *scanner) bool(v *bool) bool {
	switch s.dec.PeekKind() {
	case 't', 'f':
		tok, err := s.dec.ReadToken()
		*v = tok.Kind() == 't'
		return err == nil
	case 'n':
		return s.null()
	}
	return false
}

// skip reads a value the request does not need, checked whole. For an
// object or array, ReadValue's one pass, not SkipValue's token after
// token (a conversation's messages are most of a body).
func (s *scanner) skip() bool {
	_, err := s.dec.ReadValue()
	return err == nil
}

// null reads a null.
func (s *scanner) null() bool {
	tok, err := s.dec.ReadToken()
	return err == nil && tok.Kind() == 'n'
}
