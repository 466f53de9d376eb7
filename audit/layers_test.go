package audit_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/audit"
)

// layerLogs are an RPC log of one prompt's runs (each: its start and end,
// ms, and whether its reply is an error) and a wire log of requests (at,
// ms; status; answer ms), both on the same epoch.
func layerLogs(runs [][3]float64, reqs [][3]float64) (string, string) {
	const epoch = 1771200000000
	var rpc, wire strings.Builder
	rpc.WriteString(`{"type":"ready","protocolVersion":2}` + "\n")
	for i, r := range runs {
		if i > 0 {
			fmt.Fprintf(&rpc, `{"type":"auto_retry_start","attempt":%d,"maxAttempts":10,"delayMs":500,"errorMessage":"529 overloaded_error: Overloaded","timestamp":%v}`+"\n", i, epoch+runs[i-1][1])
		}
		fmt.Fprintf(&rpc, `{"type":"agent_start","timestamp":%v}`+"\n", epoch+r[0])
		if r[2] == 1 {
			fmt.Fprintf(&rpc, `{"type":"message_end","message":{"role":"assistant","stopReason":"error","errorMessage":"529 overloaded_error: Overloaded","errorStatus":529},"timestamp":%v}`+"\n", epoch+r[1])
		} else {
			fmt.Fprintf(&rpc, `{"type":"message_end","message":{"role":"assistant","stopReason":"stop"},"timestamp":%v}`+"\n", epoch+r[1])
		}
		fmt.Fprintf(&rpc, `{"type":"agent_end","timestamp":%v}`+"\n", epoch+r[1])
		if i > 0 && r[2] == 0 {
			fmt.Fprintf(&rpc, `{"type":"auto_retry_end","success":true,"attempt":%d,"timestamp":%v}`+"\n", i, epoch+r[1])
		}
	}
	for i, q := range reqs {
		fmt.Fprintf(&wire, `{"type":"request","seq":%d,"timestamp":%v,"method":"POST","path":"/v1/messages","api":"anthropic-messages","stream":false,"turn":%d,"status":%v,"headersMs":%v,"answerMs":%v,"bytesIn":10}`+"\n",
			i+1, epoch+q[0], i+1, q[1], q[2], q[2])
	}
	return rpc.String(), wire.String()
}

func auditLayersText(t *testing.T, profile, rpc, wire string) (rpcFs, wireFs []audit.Finding, ats []audit.Attempt, sum audit.LayersSummary, err error) {
	t.Helper()
	a, err := audit.New(audit.Options{Profile: profile})
	if err != nil {
		t.Fatal(err)
	}
	sum, err = a.AuditLayers(strings.NewReader(rpc), strings.NewReader(wire), audit.WireOptions{Slack: -1},
		func(f audit.Finding) { rpcFs = append(rpcFs, f) }, func(f audit.Finding) { wireFs = append(wireFs, f) },
		func(at audit.Attempt) { ats = append(ats, at) })
	return
}

// TestLayerRules: each rule of the two logs together, on logs written
// for it; the clean pair first.
func TestLayerRules(t *testing.T) {
	// one run: 529, 529 (waits 500 and 1000 ms), then a success
	okRuns := [][3]float64{{0, 1600, 0}}
	okReqs := [][3]float64{{0, 529, 50}, {550, 529, 50}, {1600, 200, 0}}
	rpc, wire := layerLogs(okRuns, okReqs)
	rfs, wfs, ats, sum, err := auditLayersText(t, "omp-18", rpc, wire)
	if err != nil || len(rfs)+len(wfs) != 0 || len(ats) != 1 || ats[0] != (audit.Attempt{Line: 2, Attempt: 0, Requests: 3, WireFrom: 1, WireTo: 3}) {
		t.Fatalf("clean pair: %v %v %+v %v", rfs, wfs, ats, err)
	}
	if sum.RPC.ProviderLayer != audit.ProviderLayerChecked || sum.Wire.Retries != 2 || sum.Wire.Chains != 1 || sum.Attempts != 1 {
		t.Errorf("summary %+v", sum)
	}

	for _, tc := range []struct {
		name     string
		runs     [][3]float64
		reqs     [][3]float64
		rpc, wrq string // "rule@line" of each log
	}{
		// a request after the run's agent_end
		{"wire-outside-run", okRuns, append(okReqs[:3:3], [3]float64{5000, 200, 0}), "", "wire-outside-run@4"},
		// the session saw an error, the provider's last answer was a success
		{"layer-mismatch", [][3]float64{{0, 1600, 1}, {2100, 2200, 0}}, [][3]float64{{0, 529, 50}, {550, 529, 50}, {1600, 200, 0}, {2100, 200, 0}},
			"layer-mismatch@3", ""},
		// the provider layer gave up after one retry, the session retried
		{"wire-not-retried", [][3]float64{{0, 600, 1}, {1100, 1200, 0}}, [][3]float64{{0, 529, 50}, {550, 529, 50}, {1100, 200, 0}},
			"", "wire-not-retried@2"},
		// the provider layer retried too soon
		{"wire-wait", okRuns, [][3]float64{{0, 529, 50}, {100, 529, 50}, {1150, 200, 0}}, "", "wire-wait@2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rpc, wire := layerLogs(tc.runs, tc.reqs)
			rfs, wfs, _, _, err := auditLayersText(t, "omp-18", rpc, wire)
			if err != nil {
				t.Fatal(err)
			}
			str := func(fs []audit.Finding) string {
				var s []string
				for _, f := range fs {
					s = append(s, fmt.Sprintf("%s@%d", f.Rule, f.Line))
				}
				return strings.Join(s, " ")
			}
			if str(rfs) != tc.rpc || str(wfs) != tc.wrq {
				t.Errorf("RPC %q, wire %q; want %q, %q\n%v\n%v\n%s%s", str(rfs), str(wfs), tc.rpc, tc.wrq, rfs, wfs, rpc, wire)
			}
		})
	}
}

// TestLayerAuditErrors: a profile without a provider layer is an error
// saying what is needed; an RPC log without epoch timestamps is not.
func TestLayerAuditErrors(t *testing.T) {
	rpc, wire := layerLogs([][3]float64{{0, 10, 0}}, [][3]float64{{0, 200, 0}})
	if _, _, _, _, err := auditLayersText(t, "omp-2026-06", rpc, wire); err == nil || !strings.Contains(err.Error(), "profile omp-2026-06 has no provider layer") {
		t.Errorf("no layer: %v", err)
	}
	// without epoch timestamps the runs are placed by order, not refused
	virtual := `{"type":"agent_start","t":0}` + "\n"
	if _, _, ats, _, err := auditLayersText(t, "omp-18", virtual, wire); err != nil || len(ats) != 1 || ats[0].Requests != 1 {
		t.Errorf("no timestamp: %v %+v", err, ats)
	}
}

// countingReader counts the bytes read from it.
type countingReader struct {
	r *strings.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestLayersHeldFindingsBounded: the wire findings AuditLayers holds for
// the jitter are released past 4096 (the first reported before the wire
// log is read to its end), none lost, all in line order.
func TestLayersHeldFindingsBounded(t *testing.T) {
	const n = 6000
	reqs := make([][3]float64, n)
	for i := range reqs {
		reqs[i] = [3]float64{float64(i) * 10, 529, 1}
	}
	rpc, wire := layerLogs([][3]float64{{0, n * 10, 1}}, reqs)
	a, err := audit.New(audit.Options{Profile: "omp-18"})
	if err != nil {
		t.Fatal(err)
	}
	wr := &countingReader{r: strings.NewReader(wire)}
	var wfs []audit.Finding
	readAtFirst := -1
	sum, err := a.AuditLayers(strings.NewReader(rpc), wr, audit.WireOptions{}, nil, func(f audit.Finding) {
		if readAtFirst < 0 {
			readAtFirst = wr.n
		}
		wfs = append(wfs, f)
	}, nil)
	if err != nil || len(wfs) != n-1 || sum.Wire.Findings != n-1 {
		t.Fatalf("%d findings reported, %d counted, want %d; %v", len(wfs), sum.Wire.Findings, n-1, err)
	}
	if readAtFirst >= len(wire) {
		t.Errorf("the first finding reported after all %d bytes were read", len(wire))
	}
	for i, f := range wfs {
		if f.Line != i+2 {
			t.Fatalf("finding %d at line %d, want %d: %v", i, f.Line, i+2, f)
		}
	}
}
