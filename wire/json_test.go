package wire_test

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/ohmypi/retryfsm/wire"
	"pgregory.net/rapid"
)

// TestAppendJSONIsMarshal: AppendJSON writes json.Marshal's bytes for any
// record. Every field is drawn by its kind (drawField), each left zero
// half the time (omitempty), so a field added to Record and not to
// AppendJSON fails here.
func TestAppendJSONIsMarshal(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var r wire.Record
		v := reflect.ValueOf(&r).Elem()
		for i := 0; i < v.NumField(); i++ {
			if !rapid.Bool().Draw(t, v.Type().Field(i).Name+" zero") {
				drawField(t, v, i)
			}
		}
		got, err := r.AppendJSON([]byte("prefix "))
		isMarshal(t, &r, got, err)
	})
}

// drawField sets record v's field i to a value drawn by its kind (a field
// of a kind this test does not know fails it): strings the proxy writes
// and any bytes, numbers, floats that are not numbers, maps and slices.
func drawField(t *rapid.T, v reflect.Value, i int) {
	str := func(t *rapid.T, name string) string {
		if rapid.Bool().Draw(t, name+"?") {
			return rapid.SampledFrom([]string{"", "request", "POST", "/v1/messages", "a<b>&c", "x\u2028y", "bad\xff", "q\"\\\n"}).Draw(t, name)
		}
		return string(rapid.SliceOf(rapid.Byte()).Draw(t, name))
	}
	f, name := v.Field(i), v.Type().Field(i).Name
	switch f.Kind() {
	case reflect.String:
		f.SetString(str(t, name))
	case reflect.Int:
		f.SetInt(int64(rapid.IntRange(-2, 1<<40).Draw(t, name)))
	case reflect.Bool:
		f.SetBool(rapid.Bool().Draw(t, name))
	case reflect.Float64:
		x := rapid.Float64().Draw(t, name)
		if rapid.Bool().Draw(t, name+" bits?") {
			x = math.Float64frombits(rapid.Uint64().Draw(t, name+" bits"))
		}
		f.SetFloat(x)
	case reflect.Map:
		m := map[string]string{}
		for range rapid.IntRange(0, 10).Draw(t, name+" len") {
			m[str(t, name+" key")] = str(t, name+" value")
		}
		f.Set(reflect.ValueOf(m))
	case reflect.Slice:
		var s []string
		for range rapid.IntRange(0, 3).Draw(t, name+" len") {
			s = append(s, str(t, name+" item"))
		}
		f.Set(reflect.ValueOf(s))
	default:
		t.Fatalf("field %s of kind %s: teach this test (and AppendJSON) its values", name, f.Kind())
	}
}

// isMarshal fails t unless got and err, written after "prefix ", are
// json.Marshal's of r.
func isMarshal(t *rapid.T, r *wire.Record, got []byte, err error) {
	want, werr := json.Marshal(r)
	if (err != nil) != (werr != nil) {
		t.Fatalf("error %v, Marshal's %v", err, werr)
	}
	if werr == nil && string(got) != "prefix "+string(want) {
		t.Fatalf("\n got %s\nwant prefix %s", got, want)
	}
}

// TestEncoderIsMarshal: an Encoder writes json.Marshal's bytes for each
// record of a run where each differs from the one before in one field
// (any field: one added to Record and to the request's part of the line
// but not to what the Encoder compares fails here), or in a map changed
// in place (the proxy empties and fills one map request after request),
// or not at all.
func TestEncoderIsMarshal(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var e wire.Encoder
		r := wire.Record{Type: "request", Method: "POST", Path: "/v1/messages", API: wire.Anthropic, Model: "m", Client: map[string]string{"user-agent": "u"}}
		v := reflect.ValueOf(&r).Elem()
		for range rapid.IntRange(1, 12).Draw(t, "records") {
			switch rapid.IntRange(0, 3).Draw(t, "change") {
			case 0: // none
			case 1:
				if r.Client == nil {
					r.Client = map[string]string{}
				}
				k := rapid.SampledFrom([]string{"user-agent", "x-stainless-retry-count", "idempotency-key"}).Draw(t, "client key")
				if rapid.Bool().Draw(t, "delete?") {
					delete(r.Client, k)
				} else {
					r.Client[k] = rapid.SampledFrom([]string{"u", "0", "1", ""}).Draw(t, "client value")
				}
			default:
				drawField(t, v, rapid.IntRange(0, v.NumField()-1).Draw(t, "field"))
			}
			got, err := e.Append([]byte("prefix "), &r)
			isMarshal(t, &r, got, err)
		}
	})
}

// TestAppendJSONAllocs: a usual record (a client header, no faults) is
// encoded into a buffer with room without allocating.
func TestAppendJSONAllocs(t *testing.T) {
	r := &wire.Record{Type: "request", Seq: 12, Timestamp: 1.7e12 + 0.123, Method: "POST", Path: "/v1/messages", API: wire.Anthropic,
		Model: "claude-sonnet-4-5", Client: map[string]string{"user-agent": "Go-http-client/1.1", "x-stainless-retry-count": "0"},
		Status: 200, HeadersMs: 0.0123, AnswerMs: 0.0234, BytesIn: 90}
	buf := make([]byte, 0, 1024)
	if n := testing.AllocsPerRun(100, func() { _, _ = r.AppendJSON(buf[:0]) }); n != 0 {
		t.Errorf("%v allocations a record", n)
	}
}

// BenchmarkEncoder: the wire log line of the proxy's usual request (its
// request's part the last line's), encoded as the proxy does.
func BenchmarkEncoder(b *testing.B) {
	r := &wire.Record{Type: "request", Seq: 1234, Timestamp: 1764950400123.456, Method: "POST", Path: "/v1/messages", API: wire.Anthropic,
		Model: "claude-sonnet-4-5", Client: map[string]string{"user-agent": "Go-http-client/1.1"}, Status: 200,
		HeadersMs: 0.052341, AnswerMs: 0.061237, BytesIn: 90}
	var e wire.Encoder
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = e.Append(buf[:0], r)
	}
}
