package wire

import (
	"slices"
	"strconv"

	"github.com/ohmypi/retryfsm/internal/jsonw"
)

// AppendJSON appends r as one JSON object, byte for byte what
// encoding/json's Marshal writes of it (fields in order, omitempty, map
// keys sorted, HTML characters escaped), without reflection and without
// allocating for the usual record: the proxy writes a line a request.
// The error is Marshal's for a timestamp or duration that is not a
// number.
func (r *Record) AppendJSON(b []byte) ([]byte, error) {
	b, err := r.appendHead(b)
	if err != nil {
		return b, err
	}
	return r.appendAnswer(r.appendRequest(b))
}

// appendHead appends the line's start: its type, seq and timestamp.
func (r *Record) appendHead(b []byte) ([]byte, error) {
	if r.Type == "request" { // the proxy's every line
		b = append(b, `{"type":"request","seq":`...)
	} else {
		b = append(b, `{"type":`...)
		b = jsonw.AppendStdString(b, r.Type)
		b = append(b, `,"seq":`...)
	}
	b = jsonw.AppendInt(b, int64(r.Seq))
	b = append(b, `,"timestamp":`...)
	return jsonw.AppendStdFloat(b, r.Timestamp)
}

// appendRequest appends what the request said: its method, path, API,
// model, stream and client headers (requestKey's fields).
func (r *Record) appendRequest(b []byte) []byte {
	b = appendField(b, "method", r.Method, false)
	b = appendField(b, "path", r.Path, false)
	b = appendField(b, "api", string(r.API), true)
	b = appendField(b, "model", r.Model, true)
	b = append(b, `,"stream":`...)
	b = strconv.AppendBool(b, r.Stream)
	return appendMap(b, "client", r.Client)
}

// appendAnswer appends the rest: the answer, its times, and the line's
// end.
func (r *Record) appendAnswer(b []byte) ([]byte, error) {
	var err error
	b = append(b, `,"turn":`...)
	b = jsonw.AppendInt(b, int64(r.Turn))
	if r.Upstream {
		b = append(b, `,"upstream":true`...)
	}
	b = append(b, `,"status":`...)
	b = jsonw.AppendInt(b, int64(r.Status))
	b = appendMap(b, "headers", r.Headers)
	b = appendField(b, "errorType", r.ErrorType, true)
	b = appendField(b, "errorMessage", r.ErrorMessage, true)
	if len(r.Faults) > 0 {
		b = append(b, `,"faults":[`...)
		for i, f := range r.Faults {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonw.AppendStdString(b, f)
		}
		b = append(b, ']')
	}
	if r.Events != 0 {
		b = append(b, `,"events":`...)
		b = jsonw.AppendInt(b, int64(r.Events))
	}
	b = append(b, `,"headersMs":`...)
	if b, err = jsonw.AppendStdFloat(b, r.HeadersMs); err != nil {
		return b, err
	}
	b = append(b, `,"answerMs":`...)
	if b, err = jsonw.AppendStdFloat(b, r.AnswerMs); err != nil {
		return b, err
	}
	b = append(b, `,"bytesIn":`...)
	b = jsonw.AppendInt(b, int64(r.BytesIn))
	b = appendField(b, "error", r.Error, true)
	b = appendField(b, "fleet", r.Fleet, true)
	return append(b, '}'), nil
}

// An Encoder appends records as AppendJSON does, byte for byte, the
// request's part of the line (method, path, API, model, stream, client
// headers: most of its bytes, and the same request after request in a
// client's run) copied from the last record's when it is the same. The
// zero value is ready to use; an Encoder is not safe for concurrent use.
type Encoder struct {
	key     requestKey
	request []byte // key's appendRequest bytes
	ok      bool   // key and request hold a record's
}

// requestKey is what appendRequest writes of a record, kept by an
// Encoder: the client headers as pairs, each the map's key and value.
type requestKey struct {
	method, path, model string
	api                 API
	stream              bool
	client              [][2]string
}

// maxRemembered bounds the request's part an Encoder keeps (a longer one,
// a long path or client header, is written each time).
const maxRemembered = 4 << 10

// Append appends r's line (AppendJSON's bytes and error).
func (e *Encoder) Append(b []byte, r *Record) ([]byte, error) {
	b, err := r.appendHead(b)
	if err != nil {
		return b, err
	}
	if !e.ok || !e.key.is(r) {
		e.request = r.appendRequest(e.request[:0])
		e.key.method, e.key.path, e.key.model, e.key.api, e.key.stream = r.Method, r.Path, r.Model, r.API, r.Stream
		e.key.client = e.key.client[:0]
		for k, v := range r.Client {
			e.key.client = append(e.key.client, [2]string{k, v})
		}
		e.ok = true
		if len(e.request) > maxRemembered { // not held on to
			b = append(b, e.request...)
			*e = Encoder{}
			return r.appendAnswer(b)
		}
	}
	return r.appendAnswer(append(b, e.request...))
}

// is reports whether r's request part is k's.
func (k *requestKey) is(r *Record) bool {
	if r.Method != k.method || r.Path != k.path || r.Model != k.model || r.API != k.api || r.Stream != k.stream || len(r.Client) != len(k.client) {
		return false
	}
	for _, kv := range k.client {
		if v, ok := r.Client[kv[0]]; !ok || v != kv[1] {
			return false
		}
	}
	return true
}

// appendField appends ,"name":value (nothing for an empty value when
// omitEmpty).
func appendField(b []byte, name, v string, omitEmpty bool) []byte {
	if omitEmpty && v == "" {
		return b
	}
	b = append(b, `,"`...)
	b = append(b, name...)
	b = append(b, `":`...)
	return jsonw.AppendStdString(b, v)
}

// appendMap appends ,"name":{...} with the keys sorted (nothing for an
// empty map: omitempty).
func appendMap(b []byte, name string, m map[string]string) []byte {
	if len(m) == 0 {
		return b
	}
	var arr [8]string
	keys := arr[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, `,"`...)
	b = append(b, name...)
	b = append(b, `":{`...)
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonw.AppendStdString(b, k)
		b = append(b, ':')
		b = jsonw.AppendStdString(b, m[k])
	}
	return append(b, '}')
}
