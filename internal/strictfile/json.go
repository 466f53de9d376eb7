package strictfile

// JSON syntax errors: a .json file is read as JSON (encoding/json), and
// its syntax errors are given at the line and column of the offending
// character.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"gopkg.in/yaml.v3"
)

// jsonSyntaxError reports the syntax error of data at the offending
// character; it returns if data is valid JSON.
func (r *Reader) jsonSyntaxError(data []byte) {
	err := json.Unmarshal(data, new(any))
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return
	}
	off := int(se.Offset) - 1 // the offending byte
	if off < 0 || off >= len(data) || se.Offset == int64(len(data)) && strings.HasPrefix(se.Error(), "unexpected end") {
		r.jsonEndError(data)
	}
	msg := "invalid JSON: " + se.Error()
	if c := data[off]; c == '}' || c == ']' {
		comma := off - 1
		for comma >= 0 && strings.IndexByte(" \t\r\n", data[comma]) >= 0 {
			comma--
		}
		if comma >= 0 && data[comma] == ',' {
			off, msg = comma, fmt.Sprintf("invalid JSON: trailing comma before '%c' (JSON allows none)", c)
		}
	}
	if strings.HasSuffix(msg, `'\n' in string literal`) {
		msg += " (is the string's closing quote missing?)"
	}
	pos := Pos{File: r.File}
	pos.Line, pos.Column = jsonPos(data, off)
	r.FailPos(pos, "", msg)
}

// jsonEndError reports a JSON file that ends before its value does: at
// the string, list or object left open.
func (r *Reader) jsonEndError(data []byte) {
	b := &jsonBuilder{data: data,
		dec: jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))}
	var open []int // offsets of the '[' and '{' not closed yet
	off := 0
	for {
		off = b.skip()
		tok, err := b.dec.ReadToken()
		if err != nil {
			break
		}
		switch tok.Kind() {
		case '[', '{':
			open = append(open, off)
		case ']', '}':
			if len(open) > 0 {
				open = open[:len(open)-1]
			}
		}
	}
	pos := Pos{File: r.File}
	var msg string
	switch {
	case off < len(data) && data[off] == '"':
		msg = "invalid JSON: unexpected end of file (the string that starts here is not closed)"
	case len(open) > 0:
		off = open[len(open)-1]
		msg = fmt.Sprintf("invalid JSON: unexpected end of file (the '%c' here is not closed)", data[off])
	default:
		off = len(data)
		msg = "invalid JSON: unexpected end of file"
	}
	pos.Line, pos.Column = jsonPos(data, off)
	r.FailPos(pos, "", msg)
}

// jsonPos converts a byte offset in a JSON text into a 1-based line
// and column (in characters), lines ending at line feeds.
func jsonPos(data []byte, off int) (line, col int) {
	if off > len(data) {
		off = len(data)
	}
	start := bytes.LastIndexByte(data[:off], '\n') + 1
	return bytes.Count(data[:off], []byte("\n")) + 1, utf8.RuneCount(data[start:off]) + 1
}

// DecodeJSON builds a yaml.Node tree, with positions, from JSON; a syntax
// error is reported at its line and column.
func (r *Reader) DecodeJSON(data []byte) *yaml.Node {
	data = bytes.TrimPrefix(data, []byte("\ufeff")) // a byte order mark is not JSON, but harmless
	if len(bytes.Trim(data, " \t\r\n")) == 0 {
		r.FailPos(Pos{File: r.File}, "", "empty file: expected a mapping with the "+r.What+" keys")
	}
	if !json.Valid(data) {
		r.jsonSyntaxError(data)
	}
	if !utf8.Valid(data) { // JSON text is UTF-8 (RFC 8259 §8.1), as YAML's is
		off := 0
		for off < len(data) {
			c, size := utf8.DecodeRune(data[off:])
			if c == utf8.RuneError && size <= 1 {
				break
			}
			off += size
		}
		pos := Pos{File: r.File}
		pos.Line, pos.Column = jsonPos(data, off)
		r.FailPos(pos, "", fmt.Sprintf("invalid JSON: invalid UTF-8 (found byte 0x%02x)", data[off]))
	}
	// jsontext (encoding/json/v2's tokenizer) walks tokens without
	// allocating for each; duplicates are reported by the loader itself,
	// with positions; the text is valid UTF-8.
	b := &jsonBuilder{r: r, data: data,
		dec: jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))}
	b.line, b.col = 1, 1
	tok, off := b.next()
	root := b.value(tok, off)
	r.checkRoot(root)
	return root
}

type jsonBuilder struct {
	r    *Reader
	data []byte
	dec  *jsontext.Decoder
	// The position of byte offset off is line:col (col counted in
	// characters, as the YAML library does). Tokens come in increasing
	// offsets, so the position is advanced, never recomputed.
	off, line, col int
}

// skip returns the offset where the next token starts.
func (b *jsonBuilder) skip() int {
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
func (b *jsonBuilder) next() (jsontext.Token, int) {
	off := b.skip()
	tok, err := b.dec.ReadToken()
	if err != nil {
		b.r.jsonSyntaxError(b.data)
		b.r.FailPos(Pos{File: b.r.File}, "", fmt.Sprintf("invalid JSON: %v", err))
	}
	return tok, off
}

func (b *jsonBuilder) node(kind yaml.Kind, tag, value string, off int) *yaml.Node {
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

func (b *jsonBuilder) value(tok jsontext.Token, off int) *yaml.Node {
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
	b.r.FailPos(Pos{File: b.r.File}, "", fmt.Sprintf("invalid JSON: unexpected token %v", tok))
	return nil
}
