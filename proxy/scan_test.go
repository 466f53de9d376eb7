package proxy

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/internal/testkit"
)

// scanSeeds are bodies where json.Unmarshal's reading is easy to get
// wrong: names in another case or escaped, null, a name given twice,
// tools given twice, invalid UTF-8 and surrogates, trailing bytes, kinds
// other than the field's, nesting at encoding/json's depth limit.
var scanSeeds = []string{
	`{"model":"claude-sonnet-4-5","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}`,
	`{"model":"m","stream":true,"tools":[{"name":"t"}]}`,
	`{"model":"a","Model":"b"}`, `{"MODEL":"x","STREAM":true}`, "{\"\u017ftream\":true,\"tool\u017f\":[{\"name\":\"t\"}]}",
	`{"mod\u0065l":"x","model":"y"}`, `{"model":null}`, `{"model":"a","model":null}`, `{"stream":true,"stream":null}`,
	`{"tools":null}`, `{"tools":[]}`, `{"tools":[null]}`, `{"tools":[{"name":"a"}],"tools":[{"function":{"name":"f"}}]}`,
	`{"tools":[{"name":"a"},{"name":"b"}],"tools":[{}]}`, `{"tools":[{"name":"a"}],"tools":[]}`, `{"tools":[{"name":"a"}],"tools":[null]}`,
	`{"tools":[{"name":"a"}],"tools":null,"tools":[{}]}`, `{"Tools":[{"NAME":"t","FUNCTION":{"Name":"f","name":"g"}}]}`,
	`{"tools":[{"name":1}]}`, `{"tools":[1]}`, `{"tools":[{},{"name":1}]}`, `{"tools":[{"function":null}]}`, `{"tools":[{"function":[]}]}`,
	`{"tools":[{"function":{"name":null,"x":[1,{"a":2}]}}]}`, `{"tools":{}}`, `{"tools":"x"}`,
	`{"model":"a"} x`, `{"model":"a"}{}`, " \t\r\n{\"model\":\"a\"}\n ", `{"model":"\ud800"}`, `{"model":"\ud83d\ude00"}`, "{\"model\":\"\xff\"}",
	"{\"\xff\":1}", `{"model":"a\u0000b\"\\"}`, `{"messages":[[[[]]]],"x":{"y":{"z":[true,false,null,-1.5e+300]}}}`,
	`{"model":1}`, `{"stream":"yes"}`, `{"stream":0}`, `[]`, `null`, ` null `, ``, `{`, `{"a":1,}`, `{"a" 1}`, `{"a":01}`, `{"model":"x","max_tokens":1e400}`,
	strings.Repeat("[", 9999) + strings.Repeat("]", 9999), `{"m":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`,
	`{"m":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`, `{"m":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
}

// FuzzParseRequest: what scanRequest reads of a body is what
// json.Unmarshal reads (the model, stream and the first tool), and it
// reads no body that json.Unmarshal refuses; a body it leaves is
// json.Unmarshal's; a body read again is read the same.
func FuzzParseRequest(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		got, ok := scanRequest([]byte(body))
		// read again (the last body: the scanner's copy's reading, when
		// the pool gives the same scanner back), it reads the same
		if again, aok := scanRequest([]byte(body)); aok != ok || again.Model != got.Model || again.Stream != got.Stream ||
			len(again.Tools) != len(got.Tools) || len(got.Tools) > 0 && again.Tools[0] != got.Tools[0] {
			t.Fatalf("%q: read %+v %v, read again %+v %v", body, got, ok, again, aok)
		}
		if !ok {
			return
		}
		var want rawRequest
		if err := json.Unmarshal([]byte(body), &want); err != nil {
			t.Fatalf("%q: scanned as %+v, json.Unmarshal: %v", body, got, err)
		}
		if got.Model != want.Model || got.Stream != want.Stream || len(got.Tools) > 1 || (len(got.Tools) > 0) != (len(want.Tools) > 0) ||
			len(got.Tools) > 0 && got.Tools[0] != want.Tools[0] {
			t.Fatalf("%q: scanned %+v, json.Unmarshal %+v", body, got, want)
		}
	})
}

// TestScanRequestReads: the scanner reads the bodies clients send, and
// the cases above that json.Unmarshal accepts (the fast path is taken),
// reading the model with one allocation and nothing else, none when the
// model is the last request's.
func TestScanRequestReads(t *testing.T) {
	for _, body := range scanSeeds {
		var want rawRequest
		werr := json.Unmarshal([]byte(body), &want)
		_, ok := scanRequest([]byte(body))
		if werr == nil && !ok && strings.HasPrefix(strings.TrimSpace(body), "{") && !strings.Contains(body, "\\ud800") &&
			!strings.Contains(body, "\xff") {
			t.Errorf("%.60q: json.Unmarshal reads it, the scanner does not", body)
		}
	}
	body := []byte(scanSeeds[0])
	if testkit.Race {
		return
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = parseRequest(Anthropic, body) }); n != 0 {
		t.Errorf("%v allocations a request with the last request's model, want 0", n)
	}
	other := []byte(strings.Replace(scanSeeds[0], "claude", "other", 1))
	if n := testing.AllocsPerRun(100, func() {
		_, _ = parseRequest(Anthropic, body)
		_, _ = parseRequest(Anthropic, other)
	}); n != 2 {
		t.Errorf("%v allocations for two requests of two models, want 2 (each model)", n)
	}
}

// TestScannerReleaseBounded: a scanner goes back to the pool without the
// body it read or a name buffer grown by a huge escaped name.
func TestScannerReleaseBounded(t *testing.T) {
	body := []byte(`{"` + strings.Repeat(`\u0061`, 4<<10) + `":1,"model":"m"}`)
	s := &scanner{}
	s.buf = *bytes.NewBuffer(body)
	s.dec.Reset(&s.buf, allowDuplicates)
	if !s.open() {
		t.Fatal("open")
	}
	if name, more := s.next(); !more || len(name) != 4<<10 || cap(s.name) <= maxPooledName {
		t.Fatalf("name of %d bytes read (buffer %d), want %d", len(name), cap(s.name), 4<<10)
	}
	s.release()
	if cap(s.name) > maxPooledName || s.buf.Len() != 0 || len(s.dec.UnreadBuffer()) != 0 {
		t.Errorf("released holding a name buffer of %d bytes, a body of %d, %d unread", cap(s.name), s.buf.Len(), len(s.dec.UnreadBuffer()))
	}
}

// BenchmarkParseRequest reads the benchmark's usual body (scanSeeds[0])
// and a body with a long conversation, the case the skipped members
// dominate: each read a body other than the last one (the body and a
// copy differing in max_tokens in turn), read by the decoder; and, "again",
// the same body read again (a retry's), without the decoder.
func BenchmarkParseRequest(b *testing.B) {
	long := `{"model":"claude-sonnet-4-5","max_tokens":1024,"messages":[` +
		strings.Repeat(`{"role":"user","content":[{"type":"text","text":"a turn of the conversation, its text"}]},`, 200) +
		`{"role":"user","content":"hi"}],"tools":[{"name":"read","input_schema":{"type":"object","properties":{"path":{"type":"string"}}}}]}`
	for _, bc := range []struct{ name, body string }{{"usual", scanSeeds[0]}, {"long", long}} {
		body := []byte(bc.body)
		other := []byte(strings.Replace(bc.body, `"max_tokens":1`, `"max_tokens":2`, 1))
		for _, again := range []bool{false, true} {
			name := bc.name
			if again {
				name += "-again"
			}
			b.Run(name, func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					read := body
					if i++; !again && i%2 == 0 {
						read = other
					}
					if _, err := parseRequest(Anthropic, read); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestScanRequestAgain: a body read again is read as the decoder reads
// it, whatever was read before it (the same body, another of the same
// length, one that does not scan, one over maxCachedBody), and a body
// read again right after itself does not go through the decoder: a
// body with tools, whose reading allocates the tools, allocates nothing
// the second time.
func TestScanRequestAgain(t *testing.T) {
	big := `{"model":"big","messages":["` + strings.Repeat("x", maxCachedBody) + `"]}`
	before := []string{`{"model":"a"}`, `{"model":"b"}`, `{"model":"b"} x`, big, big[:len(big)-1], scanSeeds[0], scanSeeds[1]}
	bodies := append(before[:len(before):len(before)], scanSeeds...)
	fresh := func(body string) (rawRequest, bool) {
		var s scanner
		return s.scan([]byte(body))
	}
	same := func(a, b rawRequest) bool {
		return a.Model == b.Model && a.Stream == b.Stream && len(a.Tools) == len(b.Tools) && (len(a.Tools) == 0 || a.Tools[0] == b.Tools[0])
	}
	for _, x := range before {
		for _, y := range bodies {
			for _, body := range []string{x, y, y, x, x} {
				got, ok := scanRequest([]byte(body))
				want, wok := fresh(body)
				if ok != wok || !same(got, want) {
					t.Fatalf("%.60q after %.60q: read %+v %v, the decoder reads %+v %v", body, x, got, ok, want, wok)
				}
			}
		}
	}
	if testkit.Race { // the pool drops scanners at random
		return
	}
	tools := []byte(`{"model":"m","tools":[{"name":"t"}]}`)
	if n := testing.AllocsPerRun(100, func() { _, _ = scanRequest(tools) }); n != 0 {
		t.Errorf("%v allocations reading the last body again, want 0", n)
	}
	other := []byte(`{"model":"m","tools":[{"name":"u"}]}`)
	if n := testing.AllocsPerRun(100, func() {
		_, _ = scanRequest(tools)
		_, _ = scanRequest(other)
	}); n != 2 {
		t.Errorf("%v allocations reading two bodies in turn, want 2 (each one's tools)", n)
	}
}
