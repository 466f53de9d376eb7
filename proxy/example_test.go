package proxy_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/proxy"
	"github.com/ohmypi/retryfsm/scenario"
)

// A proxy embedded in a test server: the first request gets an
// overloaded error with a retry-after hint, the second the canned answer.
// Point a client's base URL at the server.
func Example() {
	p, err := proxy.New(proxy.Options{Script: proxy.Script{Turns: []scenario.Turn{
		{StopReason: policy.StopReasonError, Status: 529, ErrorMessage: "Overloaded", Headers: map[string]string{"retry-after": "1"}},
		{StopReason: policy.StopReasonStop},
	}}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	defer p.Close()
	srv := httptest.NewServer(p)
	defer srv.Close()
	for range 2 {
		res, err := http.Post(srv.URL+"/v1/messages", "application/json", strings.NewReader(`{"model":"claude-sonnet-4-5","max_tokens":16,"messages":[]}`))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		fmt.Println(res.StatusCode, res.Header.Get("retry-after"), string(body)[:60])
	}
	// Output:
	// 529 1 {"type":"error","error":{"type":"overloaded_error","message"
	// 200  {"content":[{"text":"Hello from the retrysim proxy.","type":
}
