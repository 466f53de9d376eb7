package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"

	"github.com/ohmypi/retryfsm/internal/jsonw"
	"github.com/ohmypi/retryfsm/internal/termsafe"
)

// FormatText renders a JSON Lines trace as an aligned timeline for people:
// one row per trace line with the virtual time in ms (right-aligned) and in
// seconds, the type, and the remaining fields as key=value in the order
// they have in the line:
//
//	2000  2.000s  auto_retry_start  attempt=2 maxAttempts=3 delayMs=4000 errorMessage="503 service unavailable"
//
// Strings are written bare when that is unambiguous and JSON-quoted
// otherwise; numbers as they are in the trace; objects and lists as
// compact JSON; what JSON quoting leaves unsafe for a terminal is escaped
// (termsafe.Text). Blank lines are skipped. The output depends only on the
// input bytes. It fails on a line that is not a JSON object.
func FormatText(trace []byte) ([]byte, error) {
	type row struct{ ms, sec, typ, fields string }
	var rows []row
	sc := bufio.NewScanner(bytes.NewReader(trace))
	sc.Buffer(make([]byte, 64*1024), 4<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		fields, err := txtDecodeObject(line)
		if err != nil {
			return nil, fmt.Errorf("trace line %d: %w", n, err)
		}
		var r row
		var rest []string
		haveT, haveType := false, false
		for _, f := range fields {
			switch {
			case f.key == "t" && !haveT:
				haveT = true
				r.ms, r.sec = txtTime(f.raw)
			case f.key == "type" && !haveType:
				haveType = true
				r.typ = termsafe.Text(txtValue(f.raw))
			default:
				rest = append(rest, txtKey(f.key)+"="+txtValue(f.raw))
			}
		}
		// JSON quoting leaves DEL, C1 controls and bidirectional
		// overrides as they are: escape them for the terminal.
		r.fields = termsafe.Text(strings.Join(rest, " "))
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the trace: %w", err)
	}
	if len(rows) == 0 {
		return []byte{}, nil
	}

	// The time columns are right-aligned, the others left-aligned: a
	// tabwriter aligns all its columns one way, so the times go through one
	// of their own first and come out as a fixed-width prefix.
	var times bytes.Buffer
	tw := tabwriter.NewWriter(&times, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t\n", r.ms, r.sec)
	}
	if err := tw.Flush(); err != nil {
		return nil, err
	}
	prefixes := strings.Split(strings.TrimSuffix(times.String(), "\n"), "\n")

	var out bytes.Buffer
	tw = tabwriter.NewWriter(&out, 0, 0, 2, ' ', 0)
	for i, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", prefixes[i], r.typ, r.fields)
	}
	if err := tw.Flush(); err != nil {
		return nil, err
	}
	// Rows without fields end in the type column's padding.
	b := out.Bytes()
	res := make([]byte, 0, len(b))
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		res = append(res, bytes.TrimRight(b[:i], " ")...)
		res = append(res, '\n')
		b = b[i+1:]
	}
	return res, nil
}

// txtField is one key of a JSON object with its raw value.
type txtField struct {
	key string
	raw json.RawMessage
}

// txtDecodeObject reads one JSON object, keeping its keys in order.
func txtDecodeObject(line []byte) ([]txtField, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	var out []txtField
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("unexpected %v", tok)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		out = append(out, txtField{key, raw})
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			err = errors.New("data after the object")
		}
		return nil, err
	}
	return out, nil
}

// txtTime renders "t" as milliseconds and as seconds with three
// decimals; a non-number is shown as it is.
func txtTime(raw json.RawMessage) (ms, sec string) {
	s := string(raw)
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		sign := ""
		if v < 0 {
			sign = "-"
		}
		abs := uint64(v)
		if v < 0 {
			abs = uint64(-(v + 1)) + 1
		}
		return s, fmt.Sprintf("%s%d.%03ds", sign, abs/1000, abs%1000)
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return s, strconv.FormatFloat(f/1000, 'f', 3, 64) + "s"
	}
	return txtValue(raw), ""
}

// txtValue renders a raw JSON value for the timeline.
func txtValue(raw json.RawMessage) string {
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err == nil {
			if txtBareString(s) {
				return s
			}
			return jsonw.Compact(s)
		}
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

// txtKey renders a key bare when it is safe to, JSON-quoted otherwise.
func txtKey(k string) string {
	if txtPlain(k) {
		return k
	}
	return jsonw.Compact(k)
}

// txtBareString reports whether string value s can be shown without quotes:
// plain (txtPlain), and not readable as another JSON value (a number, true,
// false, null).
func txtBareString(s string) bool {
	return txtPlain(s) && !json.Valid([]byte(s))
}

// txtPlain reports whether s is not empty and has no spaces, quotes,
// backslashes, '=' or control characters.
func txtPlain(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !unicode.IsGraphic(r) || unicode.IsSpace(r) || r == '"' || r == '=' || r == '\\' || r == unicode.ReplacementChar {
			return false
		}
	}
	return true
}
