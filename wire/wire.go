// Package wire is the wire log's record: one line per request that
// "retrysim proxy" (package proxy) writes and audit reads (SPEC.md §18.3).
// It is its own package, without net/http, so that a program reading
// wire logs (retrysim's audit --wire) links no HTTP stack.
package wire

// DefaultMaxBodyBytes is the largest request body the proxy reads by
// default: 32 MiB, Anthropic's documented limit for the Messages API. A
// larger body is answered 413 in the provider's shape.
const DefaultMaxBodyBytes = 32 << 20

// API is one of the provider endpoints the proxy serves.
type API string

// The endpoints served (SPEC.md §18).
const (
	// Anthropic is the Anthropic Messages API, POST /v1/messages.
	Anthropic API = "anthropic-messages"
	// OpenAIChat is the OpenAI Chat Completions API, POST /v1/chat/completions.
	OpenAIChat API = "openai-chat"
	// OpenAIResponses is the OpenAI Responses API, POST /v1/responses.
	OpenAIResponses API = "openai-responses"
)

// FaultKind is a fault of the wire (SPEC.md §18.2).
type FaultKind string

// The wire's faults.
const (
	// FaultLatency waits Delay before the answer's headers.
	FaultLatency FaultKind = "latency"
	// FaultSlowBody writes the body in Chunk-byte pieces (a stream: event
	// by event) with Delay between them.
	FaultSlowBody FaultKind = "slow-body"
	// FaultStreamCut closes the connection after Events events of a
	// successful stream (a JSON answer: after half its body).
	FaultStreamCut FaultKind = "stream-cut"
	// FaultSSEError sends the provider's error event after Events events
	// of a successful stream and ends it (Anthropic's overloaded_error).
	FaultSSEError FaultKind = "sse-error"
	// FaultDrop closes the connection before any answer.
	FaultDrop FaultKind = "drop"
)

// FaultKinds are the wire's faults in SPEC.md §18.2's order: the one
// list a script's kinds, their errors and the proxy command's help read.
// A new fault is its constant and its entry here, what it does in package
// proxy, and its row in SPEC.md.
var FaultKinds = []FaultKind{FaultLatency, FaultSlowBody, FaultStreamCut, FaultSSEError, FaultDrop}

// Record is one line of the wire log (SPEC.md §18.3): a request, the
// retry headers its client sent and the answer given. Fields are only
// ever added, after these.
type Record struct {
	// Type is "request".
	Type string `json:"type"`
	// Seq numbers the requests from 1 in arrival order.
	Seq int `json:"seq"`
	// Timestamp is the request's arrival, epoch ms (fraction: µs).
	Timestamp float64 `json:"timestamp"`
	// Method and Path are the request's.
	Method string `json:"method"`
	Path   string `json:"path"`
	// API is the endpoint served ("" for another path).
	API API `json:"api,omitempty"`
	// Model and Stream are the request body's.
	Model  string `json:"model,omitempty"`
	Stream bool   `json:"stream"`
	// Client holds the retry headers the client sent, by lower-case name
	// (x-stainless-retry-count, x-stainless-timeout, idempotency-key, ...).
	Client map[string]string `json:"client,omitempty"`
	// Turn is the script's turn that answered (from 1; 0: none).
	Turn int `json:"turn"`
	// Upstream is true when the real endpoint answered.
	Upstream bool `json:"upstream,omitempty"`
	// Status is the answer's HTTP status (0: none, the connection dropped).
	Status int `json:"status"`
	// Headers are the script's headers on the answer (retry-after, ...).
	Headers map[string]string `json:"headers,omitempty"`
	// ErrorType and ErrorMessage are an error answer's.
	ErrorType    string `json:"errorType,omitempty"`
	ErrorMessage string `json:"errorMessage,omitempty"`
	// Faults are the wire faults applied, as Fault.String names them.
	Faults []string `json:"faults,omitempty"`
	// Events is the number of stream events sent.
	Events int `json:"events,omitempty"`
	// HeadersMs is the time from arrival to the answer's headers; AnswerMs
	// to the answer's end (a dropped connection: its close).
	HeadersMs float64 `json:"headersMs"`
	AnswerMs  float64 `json:"answerMs"`
	// BytesIn is the request body's size.
	BytesIn int `json:"bytesIn"`
	// Error is what went wrong on the proxy's side (a body over the
	// limit, the client gone, the upstream unreachable).
	Error string `json:"error,omitempty"`
	// Fleet is the fault model's answer (a fleet kind: "529", "429",
	// "network", ..., or "ok"), when the model answered.
	Fleet string `json:"fleet,omitempty"`
}

// Dropped reports whether the connection was closed before an answer.
func (r *Record) Dropped() bool {
	for _, f := range r.Faults {
		if f == string(FaultDrop) {
			return true
		}
	}
	return false
}

// End is the epoch ms at which the answer ended.
func (r *Record) End() float64 { return r.Timestamp + r.AnswerMs }
