package proxy_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/proxy"
	"github.com/ohmypi/retryfsm/proxy/proxytest"
	"github.com/ohmypi/retryfsm/scenario"
)

// FuzzServe: any request body and path gets an answer (or a deliberate
// abort of a cut stream) and one wire log line that reads back.
func FuzzServe(f *testing.F) {
	f.Add("/v1/messages", `{"model":"m","stream":true,"tools":[{"name":"t"}]}`)
	f.Add("/v1/chat/completions", `{"stream":"yes"}`)
	f.Add("/v1/responses", `[]`)
	f.Add("/x", ``)
	f.Add("/\x00", `{}`)
	f.Fuzz(func(t *testing.T, path, body string) {
		if !strings.HasPrefix(path, "/") {
			return
		}
		// any path, escaped as a client sends it (a control character
		// cannot be on a request line)
		target := (&url.URL{Path: path}).RequestURI()
		var log bytes.Buffer
		p, err := proxy.New(proxy.Options{Log: &log, MaxBodyBytes: 1 << 16, Script: proxy.Script{
			Turns:  []scenario.Turn{proxytest.ErrTurn(529, "Overloaded", nil), proxytest.OkTurn()},
			Faults: []proxy.Fault{{Kind: proxy.FaultStreamCut, Events: 2}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ {
			func() {
				defer func() {
					if r := recover(); r != nil {
						if err, ok := r.(error); !ok || !errors.Is(err, http.ErrAbortHandler) {
							panic(r)
						}
					}
				}()
				p.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", target, strings.NewReader(body)))
			}()
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(log.String(), "\n"), "\n")
		if len(lines) != 2 {
			t.Fatalf("%d log lines", len(lines))
		}
		for _, l := range lines {
			var r proxy.Record
			if err := json.Unmarshal([]byte(l), &r); err != nil || r.Type != "request" {
				t.Fatalf("log line %q: %v", l, err)
			}
		}
	})
}
