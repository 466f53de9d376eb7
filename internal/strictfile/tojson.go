package strictfile

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ohmypi/retryfsm/internal/jsonw"
)

// The one conversion of a file's free-form values (a scenario's settings,
// its expected trace fields) from YAML to JSON.

// badJSONValue is the message of a value JSON cannot hold.
const badJSONValue = "expected a JSON value (string, finite number, boolean, null, list or mapping), got %s"

// AppendJSON appends node n (a value of the file at path, depth levels
// down; deeper than maxDepth is an error) as JSON text: mappings (string
// keys, no duplicates, no merge keys) in file order, numbers as written
// when that is JSON, else as YAML reads them (0x1F is 31; a float keeps a
// fraction or an exponent, so 1. stays a float), strings, booleans and
// null. Any other value (an infinity, NaN, a number beyond float64, a
// binary) is an error at it.
func (r *Reader) AppendJSON(b []byte, n *yaml.Node, path string, depth, maxDepth int) []byte {
	if depth > maxDepth {
		r.Fail(n, path, "value nested more than %d levels deep", maxDepth)
	}
	switch n.Kind {
	case yaml.MappingNode:
		b = append(b, '{')
		seen := make(map[string]*yaml.Node, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			r.RejectMerge(k, path)
			if k.Kind != yaml.ScalarNode || !IsString(k) {
				r.Fail(k, path, "keys must be strings, got %s", Describe(k))
			}
			if prev, dup := seen[k.Value]; dup {
				r.Fail(k, Join(path, k.Value), "duplicate key%s (first at line %d:%d)", QuoteKey(k.Value), prev.Line, prev.Column)
			}
			seen[k.Value] = k
			if i > 0 {
				b = append(b, ',')
			}
			b = append(jsonw.AppendString(b, k.Value), ':')
			b = r.AppendJSON(b, v, Join(path, k.Value), depth+1, maxDepth)
		}
		return append(b, '}')
	case yaml.SequenceNode:
		b = append(b, '[')
		for i, c := range n.Content {
			if i > 0 {
				b = append(b, ',')
			}
			b = r.AppendJSON(b, c, Index(path, i), depth+1, maxDepth)
		}
		return append(b, ']')
	case yaml.ScalarNode:
		if out, ok := r.appendScalar(b, n, path); ok {
			return out
		}
	}
	r.Fail(n, path, badJSONValue, Describe(n))
	return nil
}

// appendScalar appends scalar n as JSON; false when JSON cannot hold it.
func (r *Reader) appendScalar(b []byte, n *yaml.Node, path string) ([]byte, bool) {
	if IsString(n) {
		return jsonw.AppendString(b, n.Value), true
	}
	switch n.ShortTag() {
	case "!!null":
		return append(b, "null"...), true
	case "!!bool":
		return strconv.AppendBool(b, r.Boolean(n, path)), true
	case "!!int", "!!float":
		if isJSONNumber(n.Value) {
			_, err := strconv.ParseFloat(n.Value, 64) // finite as a float64
			return append(b, n.Value...), err == nil
		}
		var i int64
		if n.ShortTag() == "!!int" && n.Decode(&i) == nil {
			return strconv.AppendInt(b, i, 10), true
		}
		var f float64
		if n.ShortTag() == "!!float" && n.Decode(&f) == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
			s := strconv.FormatFloat(f, 'g', -1, 64)
			if !strings.ContainsAny(s, ".eE") {
				s += ".0"
			}
			return append(b, s...), true
		}
	}
	return b, false
}

// isJSONNumber reports whether s is a JSON number as it is.
func isJSONNumber(s string) bool {
	return s != "" && (s[0] == '-' || s[0] >= '0' && s[0] <= '9') && json.Valid([]byte(s))
}

// JSONValue is node n's value (AppendJSON's JSON) as encoding/json reads
// JSON into an any: map[string]any, []any, float64, string, bool or nil.
func (r *Reader) JSONValue(n *yaml.Node, path string, depth, maxDepth int) any {
	var v any
	if err := json.Unmarshal(r.AppendJSON(nil, n, path, depth, maxDepth), &v); err != nil {
		r.Fail(n, path, badJSONValue, Describe(n)) // AppendJSON writes valid JSON: not reached
	}
	return v
}
