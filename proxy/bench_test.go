package proxy_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/proxy"
)

// BenchmarkProxy measures requests per second through the proxy on
// loopback, one keep-alive client at a time, and each request's latency
// (p50, p99): answered from the script (a canned Messages answer, the
// wire log written), and forwarded to a loopback upstream, where the added
// latency is the proxied request's minus the upstream's own, measured
// alike. vs-bare puts the scripted answer beside a minimal net/http
// handler sending the same status, headers and body bytes, in one run,
// the two servers' requests interleaved (alternating which goes first) so
// that the machine's load falls on both alike; it reports both servers'
// p50 and p99 and their ratios (SPEC.md §18.6); bare is that bare
// server alone, the floor that scripted is compared with (cachegrind
// counts each one's instructions a request, client included).
// docs/performance.md reports a run.
func BenchmarkProxy(b *testing.B) {
	const body = `{"model":"claude-sonnet-4-5","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}`
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("content-type", "application/json")
		_, _ = io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn"}`)
	}))
	defer up.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	defer client.CloseIdleConnections()
	do := func(b *testing.B, url string) time.Duration {
		start := time.Now()
		res, err := client.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			b.Fatalf("status %d", res.StatusCode)
		}
		return time.Since(start)
	}
	pct := func(ds []time.Duration, p float64) float64 {
		slices.Sort(ds)
		return float64(ds[int(float64(len(ds)-1)*p)]) / float64(time.Microsecond)
	}
	// bareServer is a minimal net/http server replaying the proxy's own
	// answer at url: its status, headers (less those net/http sets
	// itself) and body
	bareServer := func(b *testing.B, url string) *httptest.Server {
		res, err := client.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		answer, _ := io.ReadAll(res.Body)
		res.Body.Close()
		header := res.Header.Clone()
		header.Del("Date")
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			h := w.Header()
			for k, vs := range header {
				h[k] = vs
			}
			w.WriteHeader(res.StatusCode)
			_, _ = w.Write(answer)
		}))
	}
	b.Run("vs-bare", func(b *testing.B) {
		p, err := proxy.New(proxy.Options{Log: io.Discard})
		if err != nil {
			b.Fatal(err)
		}
		srv := httptest.NewServer(p)
		defer srv.Close()
		bare := bareServer(b, srv.URL+"/v1/messages")
		defer bare.Close()
		lat := make([]time.Duration, 0, b.N)
		direct := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if i%2 == 0 {
				lat = append(lat, do(b, srv.URL+"/v1/messages"))
				direct = append(direct, do(b, bare.URL+"/v1/messages"))
			} else {
				direct = append(direct, do(b, bare.URL+"/v1/messages"))
				lat = append(lat, do(b, srv.URL+"/v1/messages"))
			}
		}
		b.StopTimer()
		p50, p99, b50, b99 := pct(lat, 0.5), pct(lat, 0.99), pct(direct, 0.5), pct(direct, 0.99)
		b.ReportMetric(p50, "p50-µs")
		b.ReportMetric(p99, "p99-µs")
		b.ReportMetric(b50, "bare-p50-µs")
		b.ReportMetric(b99, "bare-p99-µs")
		b.ReportMetric(p50/b50, "p50-x")
		b.ReportMetric(p99/b99, "p99-x")
		_ = p.Close()
	})
	for _, mode := range []string{"scripted", "forwarded", "bare"} {
		b.Run(mode, func(b *testing.B) {
			opt := proxy.Options{Log: io.Discard}
			if mode == "forwarded" {
				opt.Upstream = up.URL
			}
			p, err := proxy.New(opt)
			if err != nil {
				b.Fatal(err)
			}
			srv := httptest.NewServer(p)
			defer srv.Close()
			if mode == "bare" { // vs-bare's bare server alone: the floor scripted is compared with
				bare := bareServer(b, srv.URL+"/v1/messages")
				defer bare.Close()
				srv = bare
			}
			var direct []time.Duration
			if mode == "forwarded" {
				for i := 0; i < b.N; i++ {
					direct = append(direct, do(b, up.URL+"/v1/messages"))
				}
			}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				lat = append(lat, do(b, srv.URL+"/v1/messages"))
			}
			elapsed := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
			b.ReportMetric(pct(lat, 0.5), "p50-µs")
			b.ReportMetric(pct(lat, 0.99), "p99-µs")
			if direct != nil {
				b.ReportMetric(pct(lat, 0.5)-pct(direct, 0.5), "added-p50-µs")
				b.ReportMetric(pct(lat, 0.99)-pct(direct, 0.99), "added-p99-µs")
			}
			_ = p.Close()
		})
	}
}
