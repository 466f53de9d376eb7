package scenario

// JSON syntax errors: a .json file is read as JSON (encoding/json), and
// its syntax errors are given at the line and column of the offending
// character.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// scnIsJSONName tells whether a file is read as JSON: by its extension.
func scnIsJSONName(name string) bool { return strings.HasSuffix(name, ".json") }

// jsonSyntaxError reports the syntax error of data at the offending
// character; it returns if data is valid JSON.
func (p *scnParser) jsonSyntaxError(data []byte) {
	err := json.Unmarshal(data, new(any))
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return
	}
	off := int(se.Offset) - 1 // the offending byte
	if off < 0 || off >= len(data) || se.Offset == int64(len(data)) && strings.HasPrefix(se.Error(), "unexpected end") {
		p.jsonEndError(data)
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
	pos := Pos{File: p.file}
	pos.Line, pos.Column = scnJSONPos(data, off)
	p.failPos(pos, "", msg)
}

// jsonEndError reports a JSON file that ends before its value does: at
// the string, list or object left open.
func (p *scnParser) jsonEndError(data []byte) {
	b := &scnJSONBuilder{data: data,
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
	pos := Pos{File: p.file}
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
	pos.Line, pos.Column = scnJSONPos(data, off)
	p.failPos(pos, "", msg)
}

// scnJSONPos converts a byte offset in a JSON text into a 1-based line
// and column (in characters), lines ending at line feeds.
func scnJSONPos(data []byte, off int) (line, col int) {
	if off > len(data) {
		off = len(data)
	}
	start := bytes.LastIndexByte(data[:off], '\n') + 1
	return bytes.Count(data[:off], []byte("\n")) + 1, utf8.RuneCount(data[start:off]) + 1
}
