package audit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ohmypi/retryfsm/internal/lines"
	"github.com/ohmypi/retryfsm/wire"
)

// wireLine is a wire log line as the audit reads it: a wire.Record, with
// the fields it checks read as optional numbers (present, whole, in
// range), then copied into the record.
type wireLine struct {
	wire.Record
	Seq       *float64 `json:"seq"`
	Timestamp *float64 `json:"timestamp"`
	Status    *float64 `json:"status"`
}

// wireRequest is a request of the wire log with what every check reads of
// it, worked out once: what its client got and the message an error
// answer shows.
type wireRequest struct {
	*wire.Record
	kind    answerKind
	message string
}

// maxWireMs bounds the times a wire log gives (as the RPC audit's).
const maxWireMs = maxTimeMs

// readWireLog reads a wire log's lines, counting them in sum (Lines,
// Skipped, Bad, Events: the requests), and calls onRequest with each
// request; a line that cannot be read is counted bad and given to
// badLine, and the reading goes on. Lines are read as the RPC audit reads
// its lines (encoding/json/v2: names matched exactly, a name given twice
// an error), and a request's seq (whole, from 1, above the previous
// request's), timestamp (epoch ms, from 0 to 1e15, not before the previous
// request's), status (0 or 100 to 599) and times are checked. The error
// is r's.
func readWireLog(r io.Reader, sum *Summary, badLine func(line int, rule Rule, reason string), onRequest func(line int, req *wireRequest)) error {
	lr := lines.NewReader(r, MaxLineSize)
	bad := func(line int, rule Rule, reason string) {
		sum.Bad++
		badLine(line, rule, reason)
	}
	var (
		l        wireLine
		req      = wireRequest{Record: &l.Record}
		prevSeq  float64
		prevTime = math.Inf(-1)
	)
	for {
		line, tooLong, err := lr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("audit: reading line %d: %w", sum.Lines+1, err)
		}
		sum.Lines++
		n := sum.Lines
		if tooLong {
			bad(n, LongLine, fmt.Sprintf("line longer than %d bytes, skipped unread", MaxLineSize))
			continue
		}
		trimmed := bytes.TrimSpace(line)
		if len(trimmed) == 0 {
			sum.Skipped++
			continue
		}
		l = wireLine{}
		if err := jsonv2.Unmarshal(line, &l, decodeOptions); err != nil {
			var se *jsontext.SyntacticError
			switch {
			case errors.As(err, &se):
				bad(n, BadJSON, "invalid JSON, skipped: "+strings.TrimPrefix(err.Error(), "jsontext: "))
			case trimmed[0] != '{':
				sum.Skipped++ // valid JSON, but not an object
			case l.Type != "" && l.Type != "request":
				sum.Skipped++
			default:
				bad(n, BadEvent, "request: "+describeFieldError(err)+", skipped")
			}
			continue
		}
		if l.Type != "request" {
			sum.Skipped++
			continue
		}
		if why := checkWireLine(line, &l, prevSeq, prevTime); why != "" {
			bad(n, BadEvent, "request: "+why+", skipped")
			continue
		}
		prevSeq, prevTime = *l.Seq, *l.Timestamp
		l.Record.Seq, l.Record.Timestamp, l.Record.Status = int(*l.Seq), *l.Timestamp, int(*l.Status)
		req.kind = kindOf(&l.Record)
		req.message = ""
		if req.kind == answerError {
			req.message = sdkErrorMessage(&l.Record)
		}
		sum.Events++
		onRequest(n, &req)
	}
}

// checkWireLine says what is wrong with a request line's fields ("" when
// nothing), quoting a number as the line writes it.
func checkWireLine(line []byte, l *wireLine, prevSeq, prevTime float64) string {
	quote := func(name string, v float64) string {
		if text := rawMember(line, name); text != "" {
			return text
		}
		return fmtMs(v)
	}
	switch {
	case l.Seq == nil:
		return "seq is missing (allowed: a whole number from 1)"
	case *l.Seq < 1 || *l.Seq != math.Trunc(*l.Seq) || *l.Seq > maxWhole:
		return "seq = " + quote("seq", *l.Seq) + " is not a whole number from 1"
	case *l.Seq <= prevSeq:
		return fmt.Sprintf("seq %s after seq %s (allowed: above the previous request's, the proxy's order)", quote("seq", *l.Seq), fmtMs(prevSeq))
	case l.Timestamp == nil:
		return "timestamp is missing (allowed: epoch milliseconds)"
	case *l.Timestamp < 0 || *l.Timestamp > maxWireMs:
		return "timestamp = " + quote("timestamp", *l.Timestamp) + " is out of range (allowed: epoch milliseconds from 0 to 1e15)"
	case *l.Timestamp < prevTime-hintToleranceMs:
		return fmt.Sprintf("timestamp %s is before the previous request's, %s (allowed: requests in the order they arrived)", quote("timestamp", *l.Timestamp), fmtMs(prevTime))
	case l.Status == nil:
		return "status is missing (allowed: 0 for no answer, or an HTTP status from 100 to 599)"
	case *l.Status != 0 && (*l.Status < 100 || *l.Status > 599 || *l.Status != math.Trunc(*l.Status)):
		return "status = " + quote("status", *l.Status) + " is not an HTTP status (allowed: 0 for no answer, or 100 to 599)"
	case l.AnswerMs < 0 || l.AnswerMs > maxWireMs:
		return "answerMs = " + quote("answerMs", l.AnswerMs) + " is out of range (allowed: 0 to 1e15 ms)"
	case l.HeadersMs < 0 || l.HeadersMs > maxWireMs:
		return "headersMs = " + quote("headersMs", l.HeadersMs) + " is out of range (allowed: 0 to 1e15 ms)"
	}
	return ""
}
