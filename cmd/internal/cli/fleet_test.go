package cli

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/creack/pty"

	"github.com/ohmypi/retryfsm/fleet/fleetspec"
	"github.com/ohmypi/retryfsm/internal/testkit"
)

// TestFleetDefaultTable: with no file, the default fleet sized by
// --sessions: one row, every prompt a success after four calls.
func TestFleetDefaultTable(t *testing.T) {
	code, out, errOut := runMain(t, "fleet", "--sessions", "300")
	if code != exitOK || errOut != "" {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "fleet default  profile omp-2026-02  sdk none  seeds 1  capacity unlimited") {
		t.Fatalf("output:\n%s", out)
	}
	want := "PROFILE SESSIONS PROMPTS OK FAILED WAITING CALLS/PROMPT WIRE/PROMPT 429_OVER_CAP IN_RETRY_AFTER FAILFAST EXHAUSTED " +
		"OK_P50 OK_P90 OK_P99 OK_MAX LONGEST_WAIT PEAK_DURING/AFTER PEAK/CAPACITY"
	if got := strings.Join(strings.Fields(lines[1]), " "); got != want {
		t.Errorf("header %q, want %q", got, want)
	}
	if got := strings.Join(strings.Fields(lines[2]), " "); got != "omp-2026-02 300 300 300 0 0 4.00 4.00 0 0 0 0 15.3s 15.3s 15.3s 15.3s 8s 0/0 -" {
		t.Errorf("row %q", got)
	}
}

// TestFleetTableHeadingsAndLegend: the table's headings say what they
// count (the IN_RA, PEAK and RATIO are gone), each is one field, so
// every row splits into as many fields as the heading line; --legend
// prints under the tables a line for every column, and --help lists them
// all; --legend is refused with --json; without it the table is alone.
func TestFleetTableHeadingsAndLegend(t *testing.T) {
	args := []string{"fleet", "--sessions", "200", "--capacity", "20", "--outage", "1s,3s,529",
		"--profile", "omp-2026-02=50%,omp-2026-06=50%", "--profile", "pi"}
	code, table, errOut := runMain(t, args...)
	if code != exitOK || errOut != "" {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	var headings []string
	for line := range strings.Lines(table) {
		f := strings.Fields(line)
		switch {
		case len(f) == 0 || f[0] == "fleet":
		case f[0] == "PROFILE":
			headings = f
		default:
			if len(f) != len(headings) || len(f) != len(fleetColumns) {
				t.Errorf("row of %d fields under %d headings (%d columns): %q", len(f), len(headings), len(fleetColumns), line)
			}
		}
	}
	for _, cryptic := range []string{"IN_RA", "PEAK", "RATIO", "CALLS/P", "P50"} {
		if slices.Contains(headings, cryptic) {
			t.Errorf("heading %s is still there: %q", cryptic, headings)
		}
	}
	if strings.Contains(table, "columns:") {
		t.Errorf("the legend without --legend:\n%s", table)
	}
	code, withLegend, errOut := runMain(t, append(args, "--legend")...)
	if code != exitOK || errOut != "" {
		t.Fatalf("--legend: exit %d, stderr:\n%s", code, errOut)
	}
	legend, ok := strings.CutPrefix(withLegend, table+"\ncolumns:\n")
	if !ok {
		t.Fatalf("--legend is not the table then the legend:\n%s", withLegend)
	}
	code, help, _ := runMain(t, "fleet", "--help")
	if code != exitOK {
		t.Fatalf("--help: exit %d", code)
	}
	for _, h := range headings {
		if !regexp.MustCompile(`(?m)^ +` + regexp.QuoteMeta(h) + ` +\S`).MatchString(legend) {
			t.Errorf("the legend has no line for %s:\n%s", h, legend)
		}
		if !strings.Contains(help, "    "+h+" ") {
			t.Errorf("--help does not list %s", h)
		}
	}
	for line := range strings.Lines(legend) {
		if n := len(strings.TrimSuffix(line, "\n")); n > 80 {
			t.Errorf("a legend line of %d characters: %q", n, line)
		}
	}
	code, out, errOut := runMain(t, "fleet", "--sessions", "10", "--json", "--legend")
	if code != exitUsage || out != "" || !strings.Contains(errOut, "--legend explains the table's columns: not with --json") {
		t.Errorf("--legend --json: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// fleetJSON is the part of --json the tests read.
type fleetJSON struct {
	Fleets []struct {
		Fleet, Profile, SDK string
		Seeds               []int64
		Profiles            []struct {
			Profile                             string
			Sessions, Prompts, Calls, WireCalls int64
			WireCallsPerPrompt                  float64
		}
	}
}

// TestFleetJSONSameForAnyGOMAXPROCS: the same sweep gives byte-identical
// --json with GOMAXPROCS 1 and 2 (its runs run in parallel, merged in a
// fixed order).
func TestFleetJSONSameForAnyGOMAXPROCS(t *testing.T) {
	args := []string{"fleet", "--json", "--sessions", "300", "--rate", "50", "--capacity", "20,40", "--outage", "2s,10s,529",
		"--error", "503=0.02", "--overflow", "0.01", "--calls", "uniform:1,3", "--latency", "lognormal:800ms,0.4",
		"--profile", "omp-2026-02=50%,omp-2026-06=50%", "--profile", "gemini-cli", "--seeds", "1-4"}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var outs []string
	for _, procs := range []int{1, 2} {
		runtime.GOMAXPROCS(procs)
		code, out, errOut := runMain(t, args...)
		if code != exitOK || errOut != "" {
			t.Fatalf("GOMAXPROCS %d: exit %d, stderr:\n%s", procs, code, errOut)
		}
		outs = append(outs, out)
	}
	if outs[0] != outs[1] {
		t.Fatalf("--json differs between GOMAXPROCS 1 and 2:\n%s\n---\n%s", outs[0], outs[1])
	}
	var res fleetJSON
	if err := json.Unmarshal([]byte(outs[0]), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Fleets) != 2 || res.Fleets[0].Profile != "omp-2026-02=50%,omp-2026-06=50%" || res.Fleets[1].Profile != "gemini-cli" ||
		len(res.Fleets[0].Seeds) != 4 || len(res.Fleets[0].Profiles) != 3 || res.Fleets[0].Profiles[2].Profile != "all" ||
		res.Fleets[0].Profiles[2].Sessions != 1200 || res.Fleets[1].Profiles[0].Sessions != 1200 {
		t.Fatalf("%+v", res)
	}
}

// TestFleetSDKFlag: --sdk layers the SDK's retries under the agent's; the
// issue's exact check through the command line (a provider answering 529
// forever: 12 wire calls per prompt).
func TestFleetSDKFlag(t *testing.T) {
	code, out, errOut := runMain(t, "fleet", "--json", "--sessions", "5", "--prompt-errors", "0,529", "--outage", "0s,8760h,529", "--sdk", "anthropic-sdk")
	if code != exitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	var res fleetJSON
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if p := res.Fleets[0].Profiles[0]; res.Fleets[0].SDK != "anthropic-sdk" || p.Calls != 20 || p.WireCalls != 60 || p.WireCallsPerPrompt != 12 {
		t.Fatalf("%+v", res.Fleets[0])
	}
}

// TestFleetFileAndOverrides: a fleet file runs; a flag overrides its key.
func TestFleetFileAndOverrides(t *testing.T) {
	dir := writeFiles(t, map[string]string{"small.yaml": "sessions: 20\nrate: 0\nprofile: [omp-2026-02, pi]\nseeds: 1-2\n"})
	file := filepath.Join(dir, "small.yaml")
	code, out, errOut := runMain(t, "fleet", "--json", file)
	if code != exitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	var res fleetJSON
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Fleets) != 2 || res.Fleets[0].Fleet != "small" || res.Fleets[1].Profile != "pi" || res.Fleets[0].Profiles[0].Sessions != 40 {
		t.Fatalf("%+v", res)
	}
	code, out, errOut = runMain(t, "fleet", "--json", "--sessions", "3", "--profile", "codex", "--seed", "7", file)
	if code != exitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	res = fleetJSON{}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Fleets) != 1 || res.Fleets[0].Profile != "codex" || len(res.Fleets[0].Seeds) != 1 || res.Fleets[0].Seeds[0] != 7 ||
		res.Fleets[0].Profiles[0].Sessions != 3 {
		t.Fatalf("%+v", res)
	}
}

// TestFleetUsageErrors: bad flags and files are usage errors saying what
// is allowed, and where in a file.
func TestFleetUsageErrors(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"unknown.yaml": "sessions: 10\nrat: 5\n",
		"kind.yaml":    "sessions: 10\noutages:\n  - {start: 1s, duration: 60s, kind: 418}\n",
		"range.yaml":   "sessions: 10\noverflow: 1.5\n",
	})
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--outage", "10s,60s"}, "--outage: \"10s,60s\": expected START,DURATION,KIND[,RETRY_AFTER]"},
		{[]string{"--outage", "10s,60s,418"}, `unknown kind "418" (allowed: 529, 503, 500, network, usage_limit, 429)`},
		{[]string{"--profile", "omp-2026-02=60%,pi=30%"}, "the shares add up to 90% (allowed: exactly 100%)"},
		{[]string{"--profile", "nope"}, `unknown profile "nope"`},
		{[]string{"--seeds", "5-1"}, "--seeds: \"5-1\": expected A-B"},
		{[]string{"--calls", "geometric:x"}, "--calls: \"geometric:x\": value \"x\""},
		{[]string{"--hint", "maybe"}, "--hint: unknown mode \"maybe\" (allowed: header, text, none)"},
		{[]string{"--sessions", "0"}, "sessions: 0 is out of range (allowed: an integer from 1 to 100000000)"},
		{[]string{"--sdk", "boto"}, `--sdk: unknown profile "boto"`},
		{[]string{filepath.Join(dir, "unknown.yaml")}, "unknown.yaml:2:1: rat: unknown key \"rat\" (allowed: name, description, sessions"},
		{[]string{filepath.Join(dir, "kind.yaml")}, "kind.yaml:3:38: outages[0].kind: unknown kind \"418\""},
		{[]string{filepath.Join(dir, "range.yaml")}, "range.yaml:2:11: overflow: 1.5 is out of range (allowed: a probability from 0 to below 1)"},
		{[]string{filepath.Join(dir, "missing.yaml")}, "no such file or directory"},
	} {
		code, out, errOut := runMain(t, append([]string{"fleet"}, c.args...)...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr:\n%s\nwant %q", c.args, code, out, errOut, c.want)
		}
	}
}

// TestFleetEveryFlagHasAKey: every flag of retrysim fleet but the output
// flags (--json, --shard, --plot, --legend, --out) is one of the fleet key
// table's (fleet.NewOverlay: each sets a key, and fleet's TestOverlayFlags
// checks that its help names it), with the same help and default.
func TestFleetEveryFlagHasAKey(t *testing.T) {
	keys := flag.NewFlagSet("keys", flag.ContinueOnError)
	fleetspec.NewOverlay(keys)
	fs := newFlagSet(lookup("fleet"), &strings.Builder{})
	n := 0
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name == "json" || f.Name == "shard" || f.Name == "plot" || f.Name == "legend" || f.Name == "out" {
			return
		}
		n++
		k := keys.Lookup(f.Name)
		if k == nil || k.Usage != f.Usage || k.DefValue != f.DefValue {
			t.Errorf("flag --%s is not the key table's: %+v", f.Name, k)
		}
	})
	if m := len(fleetspec.FileKeys) - 2; n < m { // every key but name and description has a flag
		t.Errorf("%d flags set keys, fewer than the %d keys with one", n, m)
	}
}

// TestFleetShardsMerge: the four shards of a sweep, each run on its own and
// merged (given in any order), print the whole sweep's --json byte for
// byte, and its table.
func TestFleetShardsMerge(t *testing.T) {
	dir := writeFiles(t, map[string]string{"small.yaml": "sessions: 40\nrate: 20\ncapacity: {rps: 5, burst: 10}\n" +
		"outages: [{start: 1s, duration: 5s, kind: 529}]\nprofile: [omp-2026-02, 'omp-2026-02=50%,omp-2026-06=50%']\n"})
	// Two groups of three runs: shard 3/4, merged first, holds a run of
	// the second group only.
	sweep := []string{"fleet", "--seeds", "1-3", filepath.Join(dir, "small.yaml")}
	code, whole, errOut := runMain(t, append(sweep, "--json")...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	code, table, errOut := runMain(t, sweep...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var files []string
	for i := range 4 {
		code, out, errOut := runMain(t, append(sweep, "--json", "--shard", strconv.Itoa(i)+"/4")...)
		if code != exitOK || errOut != "" {
			t.Fatalf("shard %d/4: exit %d: %s", i, code, errOut)
		}
		if !strings.HasPrefix(out, "{\n  \"shard\": {\n    \"format\": 2,\n    \"index\": "+strconv.Itoa(i)+",\n    \"count\": 4,") {
			t.Fatalf("shard %d/4:\n%s", i, out)
		}
		files = append(files, filepath.Join(dir, "shard"+strconv.Itoa(i)+".json"))
		if err := os.WriteFile(files[i], []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	slices.Reverse(files)
	code, merged, errOut := runMain(t, append([]string{"fleet", "merge", "--json"}, files...)...)
	if code != exitOK || errOut != "" {
		t.Fatalf("merge: exit %d: %s", code, errOut)
	}
	if merged != whole {
		t.Fatalf("merged shards differ from the whole sweep:\n%s\n---\n%s", merged, whole)
	}
	var res fleetJSON
	if err := json.Unmarshal([]byte(merged), &res); err != nil || len(res.Fleets) != 2 || len(res.Fleets[0].Seeds) != 3 {
		t.Fatalf("%v %+v", err, res)
	}
	code, mergedTable, errOut := runMain(t, append([]string{"fleet", "merge"}, files...)...)
	if code != exitOK || mergedTable != table {
		t.Fatalf("merge's table: exit %d, stderr %s:\n%s\n---\n%s", code, errOut, mergedTable, table)
	}
	// merge --json --shard 0/1: the merged sweep as its one shard, the
	// bytes the whole sweep's --shard 0/1 prints (what retrysim-plot draws).
	code, wholeShard, errOut := runMain(t, append(sweep, "--json", "--shard", "0/1")...)
	if code != exitOK {
		t.Fatalf("--shard 0/1: exit %d: %s", code, errOut)
	}
	code, mergedShard, errOut := runMain(t, append([]string{"fleet", "merge", "--json", "--shard", "0/1"}, files...)...)
	if code != exitOK || errOut != "" || mergedShard != wholeShard {
		t.Fatalf("merge --json --shard 0/1: exit %d, stderr %s:\n%s\n---\n%s", code, errOut, mergedShard, wholeShard)
	}
}

// TestFleetShardMergeErrors: bad --shard values, --shard without --json, a
// missing or repeated shard, shards of another sweep, a file that is not a
// partial result and flags merge does not take are usage errors.
func TestFleetShardMergeErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, args ...string) string {
		code, out, errOut := runMain(t, append([]string{"fleet", "--json", "--sessions", "20"}, args...)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	s0 := write("s0.json", "--seeds", "1-3", "--shard", "0/3")
	s1 := write("s1.json", "--seeds", "1-3", "--shard", "1/3")
	s2 := write("s2.json", "--seeds", "1-3", "--shard", "2/3")
	other := write("other.json", "--seeds", "1-4", "--shard", "2/3")
	plain := write("plain.json", "--seeds", "1-3")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--shard", "3/3", "--json"}, `retrysim fleet: --shard: "3/3": shard index 3 is out of range (allowed: 0 to 2; shards are numbered from 0)`},
		{[]string{"--shard", "1-3", "--json"}, `--shard: "1-3": expected I/N, shard I of N numbered from 0`},
		{[]string{"--shard", "0/3"}, "--shard prints a partial result as JSON, for 'retrysim fleet merge': give --json"},
		{[]string{"merge", s0, s2}, "retrysim fleet merge: shard 1/3 missing (a split into 3 needs every shard from 0/3 to 2/3)"},
		{[]string{"merge", s0, s1, s2, s1}, "shard 1/3 given twice: " + s1 + " and " + s1},
		{[]string{"merge", s0, s1, other}, other + ": a shard of another sweep than " + s0},
		{[]string{"merge", s0, s1, s2, plain}, plain + ": shard: missing: not a partial result (retrysim fleet --shard I/N --json writes one)"},
		{[]string{"merge", s0, filepath.Join(dir, "nope.json")}, "nope.json: open"},
		{[]string{"merge", "--sessions", "5", s0}, "merge: --sessions: not a flag of merge (merge takes --json"},
		{[]string{"merge", "--json", "--shard", "1/2", s0, s1, s2}, "merge: --shard 1/2: merge takes only --json --shard 0/1"},
		{[]string{"merge", "--shard", "0/1", s0, s1, s2}, "merge: --shard 0/1: merge takes only --json --shard 0/1"},
		{[]string{"merge"}, "merge: no partial results"},
	} {
		code, out, errOut := runMain(t, append([]string{"fleet"}, c.args...)...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr:\n%s\nwant %q", c.args, code, out, errOut, c.want)
		}
	}
	code, out, errOut := runMain(t, "fleet", "merge", s2, s0, s1)
	if code != exitOK || !strings.Contains(out, "seeds 1-3") {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	// A file over the size bound is refused before it is read whole.
	defer func(old int64) { maxPartialSize = old }(maxPartialSize)
	maxPartialSize = 10
	code, out, errOut = runMain(t, "fleet", "merge", s0, s1, s2)
	if code != exitUsage || out != "" || !strings.Contains(errOut, s0+": larger than 10 bytes") {
		t.Errorf("over the bound: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// onTerminal returns the terminal side of a new pseudo-terminal and a
// function that closes it and returns everything written to it.
func onTerminal(t *testing.T) (*os.File, func() string) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("opening a pseudo-terminal: %v", err)
	}
	screen := testkit.ReadScreen(ptmx)
	closed := false
	closeAll := func() string {
		if !closed {
			closed = true
			tty.Close()
			<-screen.Done() // the master reads EIO once the terminal side is closed
			ptmx.Close()
		}
		return screen.String()
	}
	t.Cleanup(func() { closeAll() })
	return tty, closeAll
}

// setProgress replaces the progress bar's threshold and clock for a test.
func setProgress(t *testing.T, after time.Duration, c clock.Clock) {
	t.Helper()
	oldAfter, oldClock := progressAfter, progressClock
	progressAfter, progressClock = after, c
	t.Cleanup(func() { progressAfter, progressClock = oldAfter, oldClock })
}

// TestFleetProgressAfterASecond: on a terminal, the bar shows only when
// the fleets have run for a second (a mock clock): not after 0.9 s, and
// after 1.5 s it ends full, with its line ended.
func TestFleetProgressAfterASecond(t *testing.T) {
	mock := clock.NewMock()
	setProgress(t, time.Second, mock)
	tty, screen := onTerminal(t)
	p := startProgress(tty, 1000)
	p.done.Add(1000)
	mock.Add(900 * time.Millisecond)
	p.stop()
	if out := screen(); out != "" {
		t.Fatalf("a run of 0.9 s drew on the terminal: %q", out)
	}
	tty, screen = onTerminal(t)
	p = startProgress(tty, 1000)
	p.done.Add(400)
	mock.Add(1500 * time.Millisecond)
	p.done.Add(600)
	p.stop()
	out := screen()
	if !strings.Contains(out, "fleet 100%") || !strings.Contains(out, "(1000/1000") || !strings.HasSuffix(out, "\r\n") {
		t.Fatalf("a run of 1.5 s: no full bar on the terminal: %q", out)
	}
}

// TestFleetProgressOnlyOnATerminal: with the threshold at 0, a fleet run
// with stderr on a terminal draws a bar there, and prints the same stdout
// as with stderr not a terminal, where nothing is written to stderr.
func TestFleetProgressOnlyOnATerminal(t *testing.T) {
	setProgress(t, 0, clock.New())
	args := []string{"fleet", "--sessions", "2000", "--seeds", "1-2", "--json"}
	code, plain, errOut := runMain(t, args...)
	if code != exitOK || errOut != "" {
		t.Fatalf("stderr not a terminal: exit %d, stderr %q", code, errOut)
	}
	// A file is no terminal either.
	file, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	var out bytes.Buffer
	if code := realMain(args, &out, file); code != exitOK || out.String() != plain {
		t.Fatalf("stderr a file: exit %d, stdout:\n%s", code, out.String())
	}
	if info, err := file.Stat(); err != nil || info.Size() != 0 {
		t.Fatalf("stderr a file: %v, %d bytes written", err, info.Size())
	}
	tty, screen := onTerminal(t)
	out.Reset()
	if code := realMain(args, &out, tty); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	bar := screen()
	t.Logf("the bar: %q", bar)
	if out.String() != plain {
		t.Fatalf("stdout differs with a progress bar:\n%s\n---\n%s", out.String(), plain)
	}
	if !strings.Contains(bar, "fleet 100%") || !strings.Contains(bar, "(4000/4000") || !strings.Contains(bar, "sessions") {
		t.Fatalf("no bar on the terminal: %q", bar)
	}
}

// TestFleetShardFromJobIndex: --shard index/N takes the shard's index from
// $JOB_COMPLETION_INDEX, as a Kubernetes Indexed Job sets it, and runs
// exactly shard I/N; --out writes the output to a file, not stdout (merge's
// too), and the shards written so merge, given their directory, into the
// whole sweep's bytes (a hidden file or one not named *.json there is not
// read). An
// unset, non-numeric or out-of-range index, an --out with a $(VAR) left
// unexpanded or in a missing directory are usage errors naming them.
func TestFleetShardFromJobIndex(t *testing.T) {
	dir := t.TempDir()
	shards := filepath.Join(dir, "shards")
	empty := filepath.Join(dir, "empty")
	for _, d := range []string{shards, empty} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{".shard-9.json.update-1", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(shards, name), []byte("not a partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sweep := []string{"fleet", "--json", "--sessions", "30", "--capacity", "5", "--outage", "1s,2s,529", "--seeds", "1-5"}
	code, whole, errOut := runMain(t, sweep...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for i := range 3 {
		code, want, errOut := runMain(t, append(sweep, "--shard", strconv.Itoa(i)+"/3")...)
		if code != exitOK {
			t.Fatalf("shard %d/3: exit %d: %s", i, code, errOut)
		}
		t.Setenv(completionIndexEnv, strconv.Itoa(i))
		unsetEnv(t, "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT")
		file := filepath.Join(shards, "shard-"+strconv.Itoa(i)+".json")
		code, out, errOut := runMain(t, append(sweep, "--shard", "index/3", "--out", file)...)
		if code != exitOK || out != "" || errOut != "" {
			t.Fatalf("index/3 with %s=%d: exit %d, stdout %q, stderr %s", completionIndexEnv, i, code, out, errOut)
		}
		got, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Fatalf("index/3 with %s=%d wrote:\n%s\nshard %d/3 prints:\n%s", completionIndexEnv, i, got, i, want)
		}
	}
	mergedFile := filepath.Join(dir, "sweep.json")
	code, out, errOut := runMain(t, "fleet", "merge", "--json", "--out", mergedFile, shards)
	if code != exitOK || out != "" || errOut != "" {
		t.Fatalf("merge --out: exit %d, stdout %q, stderr %s", code, out, errOut)
	}
	if merged, err := os.ReadFile(mergedFile); err != nil || string(merged) != whole {
		t.Fatalf("merged %v:\n%s\nwhole:\n%s", err, merged, whole)
	}
	if entries, _ := os.ReadDir(shards); len(entries) != 5 {
		t.Errorf("the shards' directory holds %d files, want the 3 shards and the 2 others (no temporary file left)", len(entries))
	}
	code, out, errOut = runMain(t, "fleet", "merge", empty)
	if code != exitUsage || out != "" || !strings.Contains(errOut, empty+": a directory with no partial result (no file named *.json)") {
		t.Errorf("merge of an empty directory: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	for _, c := range []struct {
		index string // "": unset
		args  []string
		want  string
	}{
		{"", []string{"--shard", "index/3"}, `--shard: "index/3": none of $JOB_COMPLETION_INDEX (a Kubernetes Indexed Job), $SLURM_ARRAY_TASK_ID (a Slurm job array) is set (the engine sets it in each task; elsewhere give I/N)`},
		{"1", []string{"--shard", "index"}, `--shard: "index" with $JOB_COMPLETION_INDEX="1": a Kubernetes Indexed Job gives no number of shards: give index/N`},
		{"3", []string{"--shard", "index/3"}, `--shard: "index/3" with $JOB_COMPLETION_INDEX="3": "3/3": shard index 3 is out of range (allowed: 0 to 2`},
		{"one", []string{"--shard", "index/3"}, `--shard: "index/3" with $JOB_COMPLETION_INDEX="one": "one/3": expected I/N`},
		{"0", []string{"--shard", "index/3", "--out", filepath.Join(dir, "shard-$(JOB_COMPLETION_INDEX).json")},
			`$(JOB_COMPLETION_INDEX) is a variable reference Kubernetes did not expand`},
		{"0", []string{"--shard", "index/3", "--out", filepath.Join(dir, "missing", "shard.json")}, "--out: " + strconv.Quote(filepath.Join(dir, "missing", "shard.json")) + ": expected a file in an existing directory"},
	} {
		t.Setenv(completionIndexEnv, c.index)
		if c.index == "" {
			os.Unsetenv(completionIndexEnv)
		}
		code, out, errOut := runMain(t, append(slices.Clone(sweep), c.args...)...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("%s=%q %q: exit %d, stdout %q, stderr:\n%s\nwant %q", completionIndexEnv, c.index, c.args, code, out, errOut, c.want)
		}
	}
}

// unsetEnv unsets the variables names for the test (restored after it).
func unsetEnv(t *testing.T, names ...string) {
	t.Helper()
	for _, name := range names {
		t.Setenv(name, "")
		os.Unsetenv(name)
	}
}

// TestFleetShardFromSlurmArray: in a Slurm job array, --shard index/N takes
// I from $SLURM_ARRAY_TASK_ID, and --shard index takes N from
// $SLURM_ARRAY_TASK_COUNT too: each prints exactly shard I/N's partial.
// Without the count, or with an index out of its range, it is a usage error
// naming the variables.
func TestFleetShardFromSlurmArray(t *testing.T) {
	unsetEnv(t, completionIndexEnv)
	sweep := []string{"fleet", "--json", "--sessions", "20", "--capacity", "5", "--seeds", "1-3"}
	for i := range 2 {
		code, want, errOut := runMain(t, append(sweep, "--shard", strconv.Itoa(i)+"/2")...)
		if code != exitOK {
			t.Fatalf("shard %d/2: exit %d: %s", i, code, errOut)
		}
		t.Setenv("SLURM_ARRAY_TASK_ID", strconv.Itoa(i))
		t.Setenv("SLURM_ARRAY_TASK_COUNT", "2")
		for _, flag := range []string{"index/2", "index"} {
			code, out, errOut := runMain(t, append(sweep, "--shard", flag)...)
			if code != exitOK || out != want {
				t.Fatalf("--shard %s with SLURM_ARRAY_TASK_ID=%d: exit %d, stderr %s, stdout:\n%s\nshard %d/2 prints:\n%s", flag, i, code, errOut, out, i, want)
			}
		}
	}
	for _, c := range []struct {
		id, count  string // "": unset
		flag, want string
	}{
		{"2", "2", "index", `--shard: "index" with $SLURM_ARRAY_TASK_ID="2", $SLURM_ARRAY_TASK_COUNT="2": "2/2": shard index 2 is out of range (allowed: 0 to 1`},
		{"0", "", "index", `--shard: "index" with $SLURM_ARRAY_TASK_ID="0": $SLURM_ARRAY_TASK_COUNT is not set: give index/N`},
		{"x", "2", "index/2", `--shard: "index/2" with $SLURM_ARRAY_TASK_ID="x": "x/2": expected I/N`},
	} {
		t.Setenv("SLURM_ARRAY_TASK_ID", c.id)
		t.Setenv("SLURM_ARRAY_TASK_COUNT", c.count)
		if c.count == "" {
			os.Unsetenv("SLURM_ARRAY_TASK_COUNT")
		}
		code, out, errOut := runMain(t, append(slices.Clone(sweep), "--shard", c.flag)...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("SLURM_ARRAY_TASK_ID=%q SLURM_ARRAY_TASK_COUNT=%q --shard %s: exit %d, stdout %q, stderr:\n%s\nwant %q", c.id, c.count, c.flag, code, out, errOut, c.want)
		}
	}
}

// TestReadmeFleetTable: docs/fleet.md's example of the fleet table is what
// "retrysim fleet fleets/outage-529.yaml --legend" prints (run `go test
// ./cmd/retrysim -run TestReadmeFleetTable -update` to write it).
func TestReadmeFleetTable(t *testing.T) {
	code, out, errOut := runMain(t, "fleet", "../../../fleets/outage-529.yaml", "--legend")
	if code != exitOK || errOut != "" {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	want := "```\n$ retrysim fleet fleets/outage-529.yaml --legend\n" + out + "```\n"
	doc := readDoc(t, fleetDoc)
	m := generatedBlockRE("fleet-legend").FindStringSubmatch(doc)
	if m == nil {
		t.Fatalf("%s has no <!-- BEGIN fleet-legend --> ... <!-- END fleet-legend --> block", fleetDoc)
	}
	if m[2] == want {
		return
	}
	if *updateReadme {
		if err := os.WriteFile(fleetDoc, []byte(strings.Replace(doc, m[0], m[1]+want+m[3], 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s's fleet table is not what retrysim fleet prints; run go test ./cmd/internal/cli -run TestReadmeFleetTable -update\n--- fleet\n%s--- %s\n%s", fleetDoc, want, fleetDoc, m[2])
}
