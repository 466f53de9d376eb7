package classify

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/internal/testkit"
)

var updateDateTable = flag.Bool("update-date-table", false, "rewrite testdata/date_parse_bun.json from bun's answers (needs bun on PATH)")

// dateTableFile holds Bun's Date.parse answers on the generated corpus:
// [token, ms or null (NaN)] pairs.
const dateTableFile = "testdata/date_parse_bun.json"

// dateCorpus is the generated corpus of date-like retry-after tokens (no
// JavaScript whitespace, ',' or ';'): hand-picked forms, then n random
// ones from a fixed seed, each a few fragments glued together (numbers of
// 1-7 digits, leading zeros included, separators, words, zones,
// parentheses) or a valid ISO date-time with one byte changed.
func dateCorpus(n int) []string {
	fixed := []string{
		"--1", "-1", "1", "+1", "0", "00", "49", "50", "99", "100", "1.5", "1/2/3", "1.2.3", "1-2-3-4",
		"2026", "2026-", "2026--01", "-2026", "+2026", "2026-02", "2026-02-16", "2026-02-16Z", "2026-02-30",
		"2026-13-01", "2026-02-16T00:00", "2026-02-16T00:00:00Z", "2026-02-16T00:00:00", "2026-02-16t00:00Z",
		"2026-02-16T00:00:00z", "2026-02-16T00:00:60Z", "2026-02-16T24:00Z", "2026-02-16T24:00:00.0001Z",
		"2026-02-16T25:00Z", "2026-02-16T00:00:00+01", "2026-02-16T00:00:00+0100", "2026-02-16T00:00:00+01:00",
		"2026-02-16T00:00:00.5Z", "2026-02-16T00:00:00.123456Z", "2026-02-16T00:00:00.0012345678912Z",
		"2026-02-16T00:00:00.Z", "2026-02-16T00", "2026-02-16T0:00", "2026-2-16T00:00", "2026-02-16T",
		"+002026-02-16", "-000000-01-01", "+000000-01-01T00:00:00Z", "-000001-01-01T00:00:00Z", "12345-01-01",
		"-271821-04-20", "-271821-04-19", "+275760-09-13", "+275760-09-14", "-271821-04-20T00:00:00+01:00",
		"2026/02/16", "02/16/2026", "2026-2-16", "2026.02.16", "16.02.2026", "99-01-01", "16-Feb-2026",
		"Feb-16-2026", "Sat-01-Jan-2000", "Jan", "January", "Jan1", "1Jan", "Janx1", "Feb29", "Feb-29-2025",
		"29-Feb-2025", "Mon", "Mon+5", "mon1", "x1", "a1", "1a", "T", "T1", "1T", "1T00:00", "Z", "1Z", "UTC",
		"1UTC", "GMT+1", "1GMT", "1GMT+5", "1GMT+0530", "1GMT-8", "1GMT+123", "1GMT+12345", "1EST", "1PST",
		"1:2", "1:2:3", "1:00PM", "1/1/1:00PM", "12AM", "1/1/12:00AM", "1/1/13:00PM", "1/1/1::", "1/1/1:2:3.4",
		"1/1/1:2:3.4567", "1/1/10:00+1", "1/1/10:00Z+1", "(x)1", "1(x)", "((1))", "1)", ")1", "1.", ".1",
		"Infinity", "NaN", "1e3", "0x10", "", "-", "+", ":", "é1", "1é", "Jané1",
	}
	r := rand.New(rand.NewPCG(18, 2026))
	frags := []string{":", "-", "+", ".", ")", "(", "(x)", "/", "T", "t", "Z", "z", "jan", "Feb", "december",
		"am", "PM", "ut", "utc", "GMT", "est", "pdt", "mon", "x", "abc", "_", "*", "~"}
	digits := func() string {
		var b strings.Builder
		for range 1 + r.IntN(7) {
			if r.IntN(3) == 0 {
				b.WriteByte('0')
			} else {
				b.WriteByte(byte('0' + r.IntN(10)))
			}
		}
		return b.String()
	}
	iso := []string{"2026-02-16T01:30:15.250Z", "+002026-02-16T01:30+01:30", "2026-02-16T24:00:00", "1999-12-31T23:59:59-0130"}
	out := fixed
	for range n {
		var b strings.Builder
		switch r.IntN(4) {
		case 0:
			s := []byte(iso[r.IntN(len(iso))])
			s[r.IntN(len(s))] = "0123456789:-+.TZtz/x"[r.IntN(20)]
			b.Write(s)
		case 1:
			// Legacy shapes: day fields, a time, a zone.
			seps := []string{"/", "-", ".", "", "-Jan-", "Mar"}
			for i := range 1 + r.IntN(3) {
				if i > 0 || r.IntN(4) == 0 {
					b.WriteString(seps[r.IntN(len(seps))])
				}
				b.WriteString(strconv.Itoa(r.IntN(40) + []int{0, 0, 1990, 100000}[r.IntN(4)]))
			}
			if r.IntN(2) == 0 {
				fmt.Fprintf(&b, "T%02d:%02d", r.IntN(26), r.IntN(61))
				if r.IntN(2) == 0 {
					fmt.Fprintf(&b, ":%02d.%d", r.IntN(61), r.IntN(10000))
				}
			}
			if r.IntN(2) == 0 {
				b.WriteString([]string{"Z", "GMT", "+01", "-0530", "+5", "PM", "am", "EST", "(c)"}[r.IntN(9)])
			}
		default:
			for range 1 + r.IntN(6) {
				if r.IntN(2) == 0 {
					b.WriteString(digits())
				} else {
					b.WriteString(frags[r.IntN(len(frags))])
				}
			}
		}
		out = append(out, b.String())
	}
	return out
}

// dateAnswer is Date.parse's answer: nil for NaN.
type dateAnswer = *float64

func goDateAnswer(s string) dateAnswer {
	if v, ok := jsDateParse(s); ok {
		return &v
	}
	return nil
}

func sameAnswer(a, b dateAnswer) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

func showAnswer(a dateAnswer) string {
	if a == nil {
		return "NaN"
	}
	return fmt.Sprintf("%.0f", *a)
}

// bunDateParse asks bun for Date.parse of every token, in UTC.
func bunDateParse(t *testing.T, bun string, tokens []string) []dateAnswer {
	t.Helper()
	dir := t.TempDir()
	in, _ := json.Marshal(tokens)
	script := `const xs = JSON.parse(require("fs").readFileSync(process.argv[2], "utf8"));
console.log(JSON.stringify(xs.map(x => { const v = Date.parse(x); return Number.isNaN(v) ? null : v; })));`
	for name, data := range map[string][]byte{"in.json": in, "parse.js": []byte(script)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bun, filepath.Join(dir, "parse.js"), filepath.Join(dir, "in.json"))
	cmd.Env = append(os.Environ(), "TZ=UTC")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bun: %v\n%s", err, stderr.Bytes())
	}
	var answers []dateAnswer
	if err := json.Unmarshal(out, &answers); err != nil || len(answers) != len(tokens) {
		t.Fatalf("bun's answers: %v (%d for %d tokens)", err, len(answers), len(tokens))
	}
	return answers
}

// TestDateParseBun is the differential test: where bun is on PATH, the
// model answers as Bun's Date.parse does on the whole generated corpus.
// With -update-date-table it rewrites the checked-in table from bun's
// answers.
func TestDateParseBun(t *testing.T) {
	testkit.Need(t, testkit.JS, "bun")
	bun, err := exec.LookPath("bun")
	if err != nil {
		t.Skip("bun is not on PATH")
	}
	tokens := dateCorpus(4000)
	answers := bunDateParse(t, bun, tokens)
	bad := 0
	for i, s := range tokens {
		if got := goDateAnswer(s); !sameAnswer(got, answers[i]) {
			if bad++; bad <= 30 {
				t.Errorf("Date.parse(%q): model %s, bun %s", s, showAnswer(got), showAnswer(answers[i]))
			}
		}
	}
	if bad > 30 {
		t.Errorf("... %d differences in all, of %d tokens", bad, len(tokens))
	}
	if *updateDateTable {
		table := make([][2]any, len(tokens))
		for i, s := range tokens {
			table[i] = [2]any{s, answers[i]}
		}
		var b bytes.Buffer
		b.WriteString("[\n")
		for i, row := range table {
			line, _ := json.Marshal(row)
			b.Write(line)
			if i < len(table)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString("]\n")
		if err := os.WriteFile(dateTableFile, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDateParseTable: the model gives Bun's answers, as checked in by
// TestDateParseBun -update-date-table, on every token of the corpus.
func TestDateParseTable(t *testing.T) {
	data, err := os.ReadFile(dateTableFile)
	if err != nil {
		t.Fatal(err)
	}
	var table []struct {
		Token  string
		Answer dateAnswer
	}
	var raw [][2]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	for _, row := range raw {
		var e struct {
			Token  string
			Answer dateAnswer
		}
		if err := json.Unmarshal(row[0], &e.Token); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(row[1], &e.Answer); err != nil {
			t.Fatal(err)
		}
		table = append(table, e)
	}
	if len(table) < 4000 {
		t.Fatalf("%s has %d rows, want the whole corpus", dateTableFile, len(table))
	}
	dates := 0
	for _, e := range table {
		got := goDateAnswer(e.Token)
		if !sameAnswer(got, e.Answer) {
			t.Errorf("Date.parse(%q): model %s, bun %s", e.Token, showAnswer(got), showAnswer(e.Answer))
		}
		if e.Answer != nil {
			dates++
			if math.Abs(*e.Answer) > maxTimeMs {
				t.Errorf("%q: bun's answer %v is outside TimeClip", e.Token, *e.Answer)
			}
		}
	}
	// The corpus must exercise both answers.
	if dates < len(table)/10 || dates > len(table)*9/10 {
		t.Errorf("%d of %d tokens are dates: the corpus is lopsided", dates, len(table))
	}
}

// TestRetryAfterDashOne: the example, retry-after=--1 is a date in
// the past (2001-01-01 in Bun), so the hint is 0; it was no hint before.
func TestRetryAfterDashOne(t *testing.T) {
	ms, ok := parseRetryAfterMs("usage limit reached, retry-after=--1", time.UnixMilli(1771200000000))
	if !ok || ms != 0 {
		t.Errorf("retry-after=--1: %v, %v; want 0, true", ms, ok)
	}
}
