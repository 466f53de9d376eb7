package proxy_test

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ohmypi/retryfsm/proxy"
)

// TestBodyStallBounds: a body whose reads each wait less than the body
// timeout is read however long it takes in all (thirteen bytes, 40 ms
// apart, with a timeout of 100 ms), and one whose read waits longer is
// answered 408 between the timeout and the timeout and an eighth after
// the read began (the stall watch's tick), on virtual time.
func TestBodyStallBounds(t *testing.T) {
	const body = `{"model":"m"}`
	for _, tc := range []struct {
		name   string
		gap    time.Duration // between the body's bytes
		status int
	}{
		{"trickle", 40 * time.Millisecond, 200},
		{"stall", time.Hour, 408},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p, srv, cli := servePipe(t, proxy.Options{BodyTimeout: 100 * time.Millisecond})
				quit := make(chan struct{})
				defer close(quit)
				go func() {
					_, _ = io.WriteString(cli, "POST /v1/messages HTTP/1.1\r\nHost: proxy.test\r\nContent-Length: 13\r\n\r\n")
					for i := range len(body) {
						if i > 0 {
							select {
							case <-time.After(tc.gap):
							case <-quit:
								return
							}
						}
						if _, err := io.WriteString(cli, body[i:i+1]); err != nil {
							return
						}
					}
				}()
				start := time.Now()
				res, err := http.ReadResponse(bufio.NewReader(cli), nil)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(res.Body)
				took := time.Since(start)
				if res.StatusCode != tc.status {
					t.Errorf("%d %s after %v, want %d", res.StatusCode, b, took, tc.status)
				}
				if tc.status == 408 {
					if took < 100*time.Millisecond || took > 100*time.Millisecond+100*time.Millisecond/8 {
						t.Errorf("stall answered after %v, want within [100ms, 112.5ms]", took)
					}
					if !strings.Contains(string(b), "request body stalled: nothing for 100ms after 1 bytes") {
						t.Errorf("answer %s", b)
					}
				} else if took < 12*tc.gap {
					t.Errorf("answered after %v, before the body's end", took)
				}
				_ = srv.Close()
				_ = cli.Close()
				if err := p.Close(); err != nil {
					t.Fatal(err)
				}
			})
		})
	}
}
