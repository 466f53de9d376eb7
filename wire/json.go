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
	var err error
	b = append(b, `{"type":`...)
	b = jsonw.AppendStdString(b, r.Type)
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, int64(r.Seq), 10)
	b = append(b, `,"timestamp":`...)
	if b, err = jsonw.AppendStdFloat(b, r.Timestamp); err != nil {
		return b, err
	}
	b = appendField(b, "method", r.Method, false)
	b = appendField(b, "path", r.Path, false)
	b = appendField(b, "api", string(r.API), true)
	b = appendField(b, "model", r.Model, true)
	b = append(b, `,"stream":`...)
	b = strconv.AppendBool(b, r.Stream)
	b = appendMap(b, "client", r.Client)
	b = append(b, `,"turn":`...)
	b = strconv.AppendInt(b, int64(r.Turn), 10)
	if r.Upstream {
		b = append(b, `,"upstream":true`...)
	}
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(r.Status), 10)
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
		b = strconv.AppendInt(b, int64(r.Events), 10)
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
	b = strconv.AppendInt(b, int64(r.BytesIn), 10)
	b = appendField(b, "error", r.Error, true)
	b = appendField(b, "fleet", r.Fleet, true)
	return append(b, '}'), nil
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
