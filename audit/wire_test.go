package audit_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/audit"
	"github.com/ohmypi/retryfsm/internal/testkit"
	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/wire"
)

// wreq is a wire log line: a request at ms (from 0) with the client's
// retry count (-1: none), answered with status after answerMs.
type wreq struct {
	at       float64
	rc       int
	status   int
	headers  map[string]string
	answerMs float64
	faults   []string
}

func wireLog(t *testing.T, reqs ...wreq) string {
	t.Helper()
	var b strings.Builder
	for i, r := range reqs {
		rec := wire.Record{Type: "request", Seq: i + 1, Timestamp: 1_800_000_000_000 + r.at, Method: "POST", Path: "/v1/messages",
			API: wire.Anthropic, Status: r.status, Headers: r.headers, AnswerMs: r.answerMs, Faults: r.faults}
		if r.rc >= 0 {
			rec.Client = map[string]string{"x-stainless-retry-count": fmt.Sprint(r.rc)}
		}
		switch {
		case r.status == 529:
			rec.ErrorType, rec.ErrorMessage = "overloaded_error", "Overloaded"
		case r.status >= 400:
			rec.ErrorType, rec.ErrorMessage = "api_error", "error"
		}
		line, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}

func auditWireText(t *testing.T, profile, log string) ([]audit.Finding, audit.WireSummary) {
	t.Helper()
	a, err := audit.New(audit.Options{Profile: profile})
	if err != nil {
		t.Fatal(err)
	}
	var fs []audit.Finding
	sum, err := a.AuditWire(strings.NewReader(log), audit.WireOptions{Slack: -1}, func(f audit.Finding) { fs = append(fs, f) })
	if err != nil {
		t.Fatal(err)
	}
	return fs, sum
}

// TestWireRules: one log per rule, each with the finding at its line, and
// the logs a profile gives clean.
func TestWireRules(t *testing.T) {
	ra := func(k, v string) map[string]string { return map[string]string{k: v} }
	cases := []struct {
		name, profile string
		reqs          []wreq
		want          string // "rule@line ...", "" for clean
	}{
		{"backoff", "anthropic-sdk-go", []wreq{{0, 0, 529, nil, 1, nil}, {451, 1, 529, nil, 1, nil}, {1452, 2, 200, nil, 1, nil}}, ""},
		{"backoff too soon", "anthropic-sdk-go", []wreq{{0, 0, 529, nil, 1, nil}, {101, 1, 200, nil, 1, nil}}, "wire-wait@2"},
		{"backoff too late", "anthropic-sdk-go", []wreq{{0, 0, 529, nil, 1, nil}, {600, 1, 200, nil, 1, nil}}, "wire-wait@2"},
		{"not retried: a new call", "anthropic-sdk-go", []wreq{{0, 0, 529, nil, 1, nil}, {451, 1, 200, nil, 1, nil}, {1000, 0, 529, nil, 1, nil}, {1500, 0, 200, nil, 1, nil}}, "wire-not-retried@3"},
		// a client that has not shown it counts: its 0 may be a retry
		// (retryfsm.Do over an SDK with its own retries off sends 0 on
		// every request); taken as one when the profile retries
		{"0 on every request: retried", "anthropic-sdk-go", []wreq{{0, 0, 529, nil, 1, nil}, {451, 0, 529, nil, 1, nil}, {1452, 0, 200, nil, 1, nil}}, ""},
		{"0 on every request: too soon", "anthropic-sdk-go", []wreq{{0, 0, 529, nil, 1, nil}, {100, 0, 200, nil, 1, nil}}, "wire-wait@2"},
		{"not retried: the log ends", "anthropic-sdk-go", []wreq{{0, 0, 500, nil, 1, nil}}, "wire-not-retried@1"},
		{"a 400 is not retried", "anthropic-sdk-go", []wreq{{0, 0, 400, nil, 1, nil}, {500, 0, 200, nil, 1, nil}}, ""},
		{"a 400 retried", "anthropic-sdk-go", []wreq{{0, 0, 400, nil, 1, nil}, {500, 1, 200, nil, 1, nil}}, "wire-retried@2"},
		{"x-should-retry true on a 400", "anthropic-sdk-go", []wreq{{0, 0, 400, ra("x-should-retry", "true"), 1, nil}, {500, 1, 200, nil, 1, nil}}, ""},
		{"a success retried", "anthropic-sdk-go", []wreq{{0, 0, 200, nil, 1, nil}, {500, 1, 200, nil, 1, nil}}, "wire-retried@2"},
		{"retries spent", "anthropic-sdk-go", []wreq{{0, 0, 529, nil, 1, nil}, {451, 1, 529, nil, 1, nil}, {1452, 2, 529, nil, 1, nil}, {5000, 3, 200, nil, 1, nil}}, "wire-retried@4"},
		{"retry count skips", "anthropic-sdk-go", []wreq{{0, 0, 529, nil, 1, nil}, {451, 2, 200, nil, 1, nil}}, "wire-retry-count@2"},
		{"hint waited", "anthropic-sdk-go", []wreq{{0, 0, 429, ra("retry-after-ms", "2000"), 1, nil}, {2001, 1, 200, nil, 1, nil}}, ""},
		{"hint not waited", "anthropic-sdk-go", []wreq{{0, 0, 429, ra("retry-after-ms", "2000"), 1, nil}, {451, 1, 200, nil, 1, nil}}, "wire-wait@2"},
		{"hint over maxWaitMs not retried", "openai-sdk-go", []wreq{{0, 0, 429, ra("retry-after", "150"), 1, nil}}, ""},
		{"hint over maxWaitMs retried", "openai-sdk-go", []wreq{{0, 0, 429, ra("retry-after", "150"), 1, nil}, {150001, 1, 200, nil, 1, nil}}, "wire-retried@2"},
		{"hint over 60 s waited", "openai-sdk", []wreq{{0, 0, 429, ra("retry-after", "65"), 1, nil}, {65001, 1, 200, nil, 1, nil}}, ""},
		{"a dropped connection retried", "openai-sdk-go", []wreq{{0, 0, 0, nil, 1, []string{"drop"}}, {451, 1, 200, nil, 1, nil}}, ""},
		{"no retry count: an error then a request is a retry", "anthropic-sdk-go", []wreq{{0, -1, 529, nil, 1, nil}, {100, -1, 200, nil, 1, nil}}, "wire-wait@2"},
		{"pi's backoff", "pi", []wreq{{0, 0, 529, nil, 1, nil}, {451, 1, 200, nil, 1, nil}}, "wire-wait@2"},
		// the real agent's provider layer: a 90 s hint waited (measured),
		// one over its 300 s maxRetryDelayMs not
		{"pi-ai: a 90 s hint waited", "pi-ai-anthropic", []wreq{{0, -1, 429, ra("retry-after", "90"), 1, nil}, {90001, -1, 200, nil, 1, nil}}, ""},
		{"pi-ai: a 400 s hint not waited", "pi-ai-anthropic", []wreq{{0, 0, 429, ra("retry-after", "400"), 1, nil}, {451, 1, 200, nil, 1, nil}}, "wire-retried@2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs, _ := auditWireText(t, tc.profile, wireLog(t, tc.reqs...))
			var got []string
			for _, f := range fs {
				got = append(got, fmt.Sprintf("%s@%d", f.Rule, f.Line))
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("findings %v, want %q: %v", got, tc.want, fs)
			}
		})
	}
}

// TestWireBadLines: lines that are not JSON or of the wrong type are
// reported and skipped; other JSON is skipped.
func TestWireBadLines(t *testing.T) {
	log := "not json\n" + `{"type":"request","seq":"x"}` + "\n\n" + `{"type":"other"}` + "\n" + wireLog(t, wreq{0, 0, 200, nil, 1, nil})
	fs, sum := auditWireText(t, "anthropic-sdk-go", log)
	if len(fs) != 2 || fs[0].Rule != audit.BadJSON || fs[0].Line != 1 || fs[1].Rule != audit.BadEvent || fs[1].Line != 2 {
		t.Errorf("findings %v", fs)
	}
	if sum.Lines != 5 || sum.Bad != 2 || sum.Skipped != 2 || sum.Events != 1 || sum.Findings != 2 {
		t.Errorf("summary %+v", sum.Summary)
	}
}

// TestWireBestFit: the summary names the profiles with the fewest
// findings: a 150 s hint waited in full fits anthropic-sdk, openai-sdk and
// anthropic-sdk-go, not openai-sdk-go (over 120 s: not retried) nor the
// default (hints ignored).
func TestWireBestFit(t *testing.T) {
	log := wireLog(t, wreq{0, 0, 429, map[string]string{"retry-after": "150"}, 1, nil}, wreq{150001, 1, 200, nil, 1, nil})
	_, sum := auditWireText(t, "pi", log)
	for _, p := range []string{"anthropic-sdk", "anthropic-sdk-go", "openai-sdk"} {
		if !slices.Contains(sum.Best, p) {
			t.Errorf("best %v, want %s among them", sum.Best, p)
		}
	}
	for _, p := range []string{"openai-sdk-go", "omp-2026-02", "pi"} {
		if slices.Contains(sum.Best, p) {
			t.Errorf("best %v, want no %s", sum.Best, p)
		}
	}
	if len(sum.Fits) != len(policy.Profiles()) || sum.Findings == 0 {
		t.Errorf("fits %v, findings under pi %d", sum.Fits, sum.Findings)
	}
}

// unretried is call i of a wire log of calls each a 529 the client does
// not retry (a wire-not-retried finding per call).
func unretried(i int) []byte {
	return []byte(fmt.Sprintf(`{"type":"request","seq":%d,"timestamp":%d,"method":"POST","path":"/v1/messages","status":529,"errorType":"overloaded_error","errorMessage":"Overloaded","answerMs":1,"client":{"x-stainless-retry-count":"0"}}`+"\n", i, i*10000))
}

// TestAuditWireMemoryBounded: auditing a wire log keeps nothing per
// request: the heap after 20 000 calls (and findings) is within 1 MB of
// its size after 2 000.
func TestAuditWireMemoryBounded(t *testing.T) {
	testkit.Need(t, testkit.Soak, "reading 20 000 lines")
	const n, early = 20000, 2000
	a, err := audit.New(audit.Options{Profile: "anthropic-sdk-go"})
	if err != nil {
		t.Fatal(err)
	}
	var found int
	var heapEarly, heapLate uint64
	sum, err := a.AuditWire(&testkit.Feed{N: n, Block: unretried}, audit.WireOptions{}, func(f audit.Finding) {
		found++
		switch found {
		case early:
			heapEarly = testkit.HeapAlloc()
		case n / 2:
			heapLate = testkit.HeapAlloc()
		}
	})
	if err != nil || sum.Events != n || found < n/2 || found != sum.Findings || heapLate == 0 {
		t.Fatalf("%+v, %d findings, %v", sum.Summary, found, err)
	}
	if heapLate > heapEarly+1<<20 {
		t.Errorf("heap %d after %d calls, %d after %d", heapLate, n, heapEarly, early)
	}
}

// TestWireLinesReadStrictly: the wire log is read as the RPC log is
// (SPEC §16.1): a name given twice is invalid JSON, names are matched
// exactly (STATUS is not status: the status is missing), a JSON value
// that is not an object is skipped, a field of the wrong type says which
// and what is allowed.
func TestWireLinesReadStrictly(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{`{"type":"request","seq":1,"timestamp":1,"status":200,"status":529}`, `bad-json: invalid JSON, skipped: duplicate object member name "status"`},
		{`{"type":"request","seq":1,"timestamp":1,"STATUS":529}`, "bad-event: request: status is missing (allowed: 0 for no answer, or an HTTP status from 100 to 599), skipped"},
		{`{"type":"request","seq":1,"timestamp":1,"status":"529"}`, "bad-event: request: status is a JSON string (allowed: a number), skipped"},
		{`{"type":"request","seq":1,"timestamp":1,"status":529,"client":[]}`, "bad-event: request: client is an array"},
		{`[{"type":"request"}]`, ""},
		{`42`, ""},
		{`"request"`, ""},
	} {
		fs, sum := auditWireText(t, "anthropic-sdk-go", tc.line+"\n")
		got := ""
		if len(fs) == 1 {
			got = fmt.Sprintf("%s: %s", fs[0].Rule, fs[0].Reason)
		}
		if len(fs) > 1 || !strings.HasPrefix(got, tc.want) || (tc.want == "" && sum.Skipped != 1) {
			t.Errorf("%s: %v (%+v), want %q", tc.line, fs, sum.Summary, tc.want)
		}
	}
}

// TestWireAbsurdValues: numbers a wire log cannot hold are bad lines,
// quoted as written, not read as answers or waits: a status that is not
// an HTTP status, a time out of range, a seq or a timestamp that goes
// back.
func TestWireAbsurdValues(t *testing.T) {
	const ok = `{"type":"request","seq":1,"timestamp":1800000000000,"status":200,"answerMs":1}`
	for _, tc := range []struct{ line, want string }{
		{`{"type":"request","seq":2,"timestamp":1800000001000,"status":1000000000000}`, "status = 1000000000000 is not an HTTP status (allowed: 0 for no answer, or 100 to 599)"},
		{`{"type":"request","seq":2,"timestamp":1800000001000,"status":-5}`, "status = -5 is not an HTTP status"},
		{`{"type":"request","seq":2,"timestamp":1800000001000,"status":99}`, "status = 99 is not an HTTP status"},
		{`{"type":"request","seq":2,"timestamp":-1e300,"status":529}`, "timestamp = -1e300 is out of range (allowed: epoch milliseconds from 0 to 1e15)"},
		{`{"type":"request","seq":2,"timestamp":1e308,"status":529}`, "timestamp = 1e308 is out of range"},
		{`{"type":"request","seq":2,"timestamp":1799999999000,"status":529}`, "timestamp 1799999999000 is before the previous request's, 1800000000000"},
		{`{"type":"request","seq":1,"timestamp":1800000001000,"status":529}`, "seq 1 after seq 1 (allowed: above the previous request's"},
		{`{"type":"request","seq":2.5,"timestamp":1800000001000,"status":529}`, "seq = 2.5 is not a whole number from 1"},
		{`{"type":"request","seq":2,"timestamp":1800000001000,"status":529,"answerMs":-5}`, "answerMs = -5 is out of range"},
	} {
		fs, sum := auditWireText(t, "anthropic-sdk-go", ok+"\n"+tc.line+"\n")
		if len(fs) != 1 || fs[0].Rule != audit.BadEvent || fs[0].Line != 2 || !strings.Contains(fs[0].Reason, tc.want) || sum.Events != 1 {
			t.Errorf("%s: %v (%+v), want bad-event at line 2 saying %q", tc.line, fs, sum.Summary, tc.want)
		}
	}
}
