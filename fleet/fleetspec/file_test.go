package fleetspec

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestParseEveryKey: a file with every key gives the Config it says.
func TestParseEveryKey(t *testing.T) {
	src := `name: all-keys
description: every key
sessions: 50
rate: 2.5
prompts: 3
think: exp:10s
calls: uniform:1,4
latency: lognormal:2s,0.5
errorLatency: 50ms
capacity: {rps: 20, burst: 40, maxInFlight: 30}
overCapacity: {hint: text, retryAfter: 5s}
outages:
  - {start: 10s, duration: 60s, kind: 529}
  - {start: 2m, duration: 1h, kind: usage_limit, retryAfter: 30m}
errors: {503: 0.01, network: 0.002}
overflow: 0.001
promptErrors: {count: 2, kind: "500"}
profile: ["omp-2026-02=25%,pi=75%", codex]
sdk: openai-sdk
horizon: 2h
recovery: 30s
compaction: {succeed: false}
seeds: 3-5
`
	spec, err := Parse("dir/x.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Name: "all-keys", Sessions: 50, Rate: 2.5, Prompts: 3,
		Think: Dist{Kind: DistExp, A: float64(10 * time.Second)}, Calls: Dist{Kind: DistUniform, A: 1, B: 4},
		Latency: Dist{Kind: DistLogNormal, A: float64(2 * time.Second), B: 0.5}, ErrorLatency: Fixed(float64(50 * time.Millisecond)),
		Capacity: Capacity{RPS: 20, Burst: 40, MaxInFlight: 30}, OverCapacity: OverCapacity{Hint: HintText, RetryAfter: 5 * time.Second},
		Outages: []Outage{{Start: 10 * time.Second, Duration: time.Minute, Kind: Kind529},
			{Start: 2 * time.Minute, Duration: time.Hour, Kind: KindUsageLimit, RetryAfter: 30 * time.Minute}},
		Errors: []Rate{{Kind: Kind503, P: 0.01}, {Kind: KindNetwork, P: 0.002}}, Overflow: 0.001,
		PromptErrors: PromptErrors{Count: 2, Kind: Kind500},
		Profiles:     Mix{{Profile: "omp-2026-02", Percent: 25}, {Profile: "pi", Percent: 75}}, SDK: "openai-sdk",
		Horizon: 2 * time.Hour, Recovery: 30 * time.Second, Compaction: Compaction{Enabled: true}, Seed: 3}
	if !reflect.DeepEqual(spec.Config, want) {
		t.Fatalf("config\n%+v\nwant\n%+v", spec.Config, want)
	}
	if spec.Description != "every key" || len(spec.Mixes) != 2 || spec.Mixes[1].String() != "codex" || spec.SeedFrom != 3 || spec.SeedTo != 5 {
		t.Fatalf("spec %+v", spec)
	}
	if n := len(spec.Configs()); n != 6 {
		t.Fatalf("%d runs, want 2 mixes x 3 seeds", n)
	}
	// Defaults: the name from the file, compaction on, one seed.
	spec, err = Parse("dir/small.yaml", []byte("sessions: 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c := spec.Config; c.Name != "small" || c.Compaction != (Compaction{true, true}) || c.Seed != 1 || spec.SeedTo != 1 || c.Profiles.String() != "omp-2026-02" {
		t.Fatalf("%+v", spec)
	}
}

// TestParseUnifiedSpellings: a fleet file takes the spellings every file
// kind shares: a duration as a Go duration or an integer number of
// milliseconds (a scenario file's), and compaction as on, off or fail (the
// flag's) or {enabled, succeed}; each old and new spelling reads the same.
func TestParseUnifiedSpellings(t *testing.T) {
	for _, c := range []struct {
		src  string
		want func(c Config) bool
	}{
		{"horizon: 90000\nrecovery: 1500", func(c Config) bool { return c.Horizon == 90*time.Second && c.Recovery == 1500*time.Millisecond }},
		{"horizon: 90s\nrecovery: 1.5s", func(c Config) bool { return c.Horizon == 90*time.Second && c.Recovery == 1500*time.Millisecond }},
		{"outages: [{start: 10000, duration: 60s, kind: 529}]", func(c Config) bool { return c.Outages[0].Start == 10*time.Second }},
		{"compaction: on", func(c Config) bool { return c.Compaction == Compaction{Enabled: true, Succeed: true} }},
		{"compaction: off", func(c Config) bool { return c.Compaction == Compaction{} }},
		{"compaction: fail", func(c Config) bool { return c.Compaction == Compaction{Enabled: true} }},
		{"compaction: {enabled: false, succeed: false}", func(c Config) bool { return c.Compaction == Compaction{} }},
		{"compaction: {succeed: false}", func(c Config) bool { return c.Compaction == Compaction{Enabled: true} }},
	} {
		spec, err := Parse("f.yaml", []byte("sessions: 1\n"+c.src+"\n"))
		if err != nil || !c.want(spec.Config) {
			t.Errorf("%q: %v %+v", c.src, err, spec)
		}
	}
}

// TestParseErrors: each error names the place, the key and what is
// allowed.
func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"", "f.yaml: empty file"},
		{"- 1\n", "f.yaml:1:1: the top level must be a mapping"},
		{"sessions: 1\nsessions: 2\n", `f.yaml:2:1: sessions: duplicate key "sessions" (first at line 1:1)`},
		{"rate: 1\n", "f.yaml:1:1: sessions: missing"},
		{"sessions: ten\n", `f.yaml:1:11: sessions: expected an integer from 1 to 100000000, got string "ten"`},
		{"sessions: 1\nthink: 10\n", `f.yaml:2:8: think: "10": value "10"`},
		{"sessions: 1\nhorizon: 1.5\n", `f.yaml:2:10: horizon: expected a duration from 0s to 8760h0m0s: a Go duration such as "60s"`},
		{"sessions: 1\nhorizon: 1y\n", `f.yaml:2:10: horizon: expected a duration from 0s to 8760h0m0s`},
		{"sessions: 1\nhorizon: 9000h\n", `f.yaml:2:10: horizon: "9000h" is out of range (allowed: a duration from 0s to 8760h0m0s`},
		{"sessions: 1\nrecovery: 31536000001\n", `f.yaml:2:11: recovery: 31536000001 is out of range`},
		{"sessions: 1\ncompaction: maybe\n", `f.yaml:2:13: compaction: `},
		{"sessions: 1\ncapacity: {rps: 5, bust: 3}\n", `f.yaml:2:20: capacity.bust: unknown key "bust" (allowed: rps, burst, maxInFlight); did you mean burst?`},
		{"sessions: 1\ncapacity: {rps: 5}\n", "f.yaml:2:11: capacity.burst: 0 is out of range (allowed: an integer from 1 to 1e9 with rps, 0 without)"},
		{"sessions: 1\noutages: [{start: 1s, kind: 529}]\n", "f.yaml:2:11: outages[0]: an outage window needs duration and kind"},
		{"sessions: 1\noutages: [{duration: 1s, kind: overflow}]\n", `outages[0].kind: unknown kind "overflow" (allowed: 529, 503, 500, network, usage_limit, 429)`},
		{"sessions: 1\noutages: [{duration: 1s, kind: 529, retryAfter: 5s}]\n", "f.yaml:2:49: outages[0].retryAfter: only a usage_limit or 429 window has a retry-after"},
		{"sessions: 1\nerrors: {503: 0.6, 500: 0.6}\n", "f.yaml:2:9: errors: the error rates and the overflow rate add up to 1.2 (allowed: at most 1)"},
		{"sessions: 1\nprofile: omp-2026-02=50%\n", "f.yaml:2:10: profile: the shares add up to 50% (allowed: exactly 100%)"},
		{"sessions: 1\nprofile: [pi, nope]\n", `f.yaml:2:15: profile[1]: unknown profile "nope"`},
		{"sessions: 1\noverflow: 1\n", "f.yaml:2:11: overflow: 1 is out of range (allowed: a probability from 0 to below 1)"},
		{"sessions: 1\nsdk: nope\n", `f.yaml:2:6: sdk: unknown profile "nope"`},
		{"sessions: 1\nseeds: 0-3\n", `f.yaml:2:8: seeds: "0-3": expected A-B`},
		{"sessions: &a 1\nrate: *a\n", "f.yaml:2:7: YAML aliases (*a) are not supported"},
		{"sessions: 1\n---\nsessions: 2\n", "more than one YAML document"},
		{"sessions: [1\n", "f.yaml:1:11: invalid YAML: did not find expected ',' or ']' (the '[' here is not closed)"},
	} {
		_, err := Parse("f.yaml", []byte(c.src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.src, err, c.want)
		}
	}
}

// TestParseFlagsForms: the text forms the flags and the files share.
func TestParseFlagsForms(t *testing.T) {
	for _, s := range []string{"1s", "uniform:500ms,3s", "exp:2s", "lognormal:2s,0.5"} {
		d, err := ParseDuration(s)
		if err != nil || d.Format(false) != s {
			t.Errorf("%q: %v %q", s, err, d.Format(false))
		}
	}
	for _, s := range []string{"3", "uniform:1,5", "geometric:4"} {
		d, err := ParseCount(s)
		if err != nil || d.Format(true) != s {
			t.Errorf("%q: %v %q", s, err, d.Format(true))
		}
	}
	for _, s := range []string{"0", "exp:3", "geometric:1s", "uniform:5,1", "lognormal:2s", "fixed:-1s", "weibull:1s"} {
		if _, err := ParseCount(s); err == nil {
			if _, err := ParseDuration(s); err == nil {
				t.Errorf("%q accepted", s)
			}
		}
	}
	for _, s := range []string{"10s,1m0s,529", "0s,3h0m0s,usage_limit,30m0s"} {
		o, err := ParseOutage(s)
		if err != nil || o.String() != s {
			t.Errorf("%q: %v %q", s, err, o)
		}
	}
	m, err := ParseMix("omp-2026-02=33.5%,pi=66.5%")
	if err != nil || m.String() != "omp-2026-02=33.5%,pi=66.5%" {
		t.Errorf("mix %v %v", m, err)
	}
	for _, s := range []string{"", "pi=50%", "pi,codex", "pi=0%,codex=100%", "pi=50%,pi=50%", "pi=x%,codex=50%"} {
		if _, err := ParseMix(s); err == nil {
			t.Errorf("mix %q accepted", s)
		}
	}
}

// TestParseSyntaxPositions: a fleet file's syntax errors name the line and
// column, as a scenario file's do: control characters, bytes that are not
// UTF-8 (in YAML and in JSON) and nesting too deep.
func TestParseSyntaxPositions(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"f.yaml", "sessions: 1\nname: a\x01b\n", "f.yaml:2:8: invalid YAML: control characters are not allowed (found U+0001)"},
		{"f.yaml", "sessions: 1\nname: a\xffb\n", "f.yaml:2:8: invalid YAML: invalid leading UTF-8 octet (found byte 0xff)"},
		{"f.yaml", "sessions: 1\nname: " + strings.Repeat("[", 10001) + "\n", "f.yaml:2:10007: invalid YAML: exceeded max depth of 10000"},
		{"f.json", "{\"sessions\": 1,\n \"name\": \"a\xffb\"}", "f.json:2:12: invalid JSON: invalid UTF-8 (found byte 0xff)"},
		{"f.json", "{\"sessions\": 1,\n \"name\": \"a\x01b\"}", "f.json:2:12: invalid JSON: invalid character '\\x01' in string literal"},
	} {
		_, err := Parse(c.name, []byte(c.src))
		if err == nil || err.Error() != c.want {
			t.Errorf("%q: error %v, want %q", c.src, err, c.want)
		}
	}
}
