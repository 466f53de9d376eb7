package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/policy"
	"gopkg.in/yaml.v3"
)

// profileNames are the profiles in the order the command lists them: the
// registry's (policy.Profiles).
var profileNames = func() []string {
	var names []string
	for _, p := range policy.Profiles() {
		names = append(names, p.Name)
	}
	return names
}()

// TestProfilesTable: the table has a header and one row per profile, in
// order, with the profile's parameters in their columns.
func TestProfilesTable(t *testing.T) {
	code, out, errOut := runMain(t, "profiles")
	if code != exitOK || errOut != "" {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 1+len(profileNames) {
		t.Fatalf("%d lines, want a header and %d rows:\n%s", len(lines), len(profileNames), out)
	}
	header := strings.Fields(lines[0])
	wantHeader := []string{"NAME", "RETRIES", "BASE_MS", "FACTOR", "CAP_MS", "JITTER", "HINTS", "MAXHINT_MS", "MAXWAIT_MS", "CLASSIFY", "PERSISTENT", "SUMMARY"}
	if strings.Join(header, " ") != strings.Join(wantHeader, " ") {
		t.Errorf("header %q, want %q", header, wantHeader)
	}
	// Every column starts where its header does (tabwriter's alignment).
	summaryAt := strings.Index(lines[0], "SUMMARY")
	ps := policy.Profiles()
	for i, name := range profileNames {
		row := lines[i+1]
		if f := strings.Fields(row); len(f) == 0 || f[0] != name {
			t.Errorf("row %d is %q, want profile %s", i+1, row, name)
			continue
		}
		if !strings.HasPrefix(row[summaryAt:], ps[i].Summary) {
			t.Errorf("row %s: the summary column is %q, want %q", name, row[summaryAt:], ps[i].Summary)
		}
	}
	cells := func(name string) []string {
		for _, l := range lines[1:] {
			if f := strings.Fields(l); f[0] == name {
				return f
			}
		}
		t.Fatalf("no row %s", name)
		return nil
	}
	for name, want := range map[string]string{
		"omp-2026-02": "omp-2026-02 3 2000 2 - none ignore - - message no",
		"omp-2026-06": "omp-2026-06 10 500 2 8000 down 0.25 floor - 300000 message no",
		"codex":       "codex 5 200 2 - updown 0.1 replace - - message+patterns no",
		"gemini-cli":  "gemini-cli 9 5000 2 30000 updown 0.3 floor - 300000 status+patterns no",
		"openai-sdk":  "openai-sdk 2 500 2 8000 down 0.25 replace - - status+patterns no",
	} {
		n := len(strings.Fields(want))
		if got := strings.Join(cells(name)[:n], " "); got != want {
			t.Errorf("row %s: %q, want %q", name, got, want)
		}
	}
}

// TestProfilesJSON: --json is an array of the nine profiles in order; each
// settings object reads back (as the settings JSON) to the profile's
// settings and writes back byte for byte.
func TestProfilesJSON(t *testing.T) {
	code, out, errOut := runMain(t, "profiles", "--json")
	if code != exitOK || errOut != "" {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	var list []struct {
		Name, Summary, Source string
		Settings              json.RawMessage
		Layer                 string
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&list); err != nil {
		t.Fatalf("--json does not parse: %v\n%s", err, out)
	}
	if len(list) != len(profileNames) {
		t.Fatalf("%d profiles, want %d", len(list), len(profileNames))
	}
	for i, p := range list {
		if p.Name != profileNames[i] {
			t.Errorf("element %d is %q, want %q", i, p.Name, profileNames[i])
			continue
		}
		want, err := policy.ProfileByName(p.Name)
		if err != nil {
			t.Fatal(err)
		}
		if p.Summary != want.Summary || p.Source != want.Source {
			t.Errorf("%s: summary %q, source %q; want %q, %q", p.Name, p.Summary, p.Source, want.Summary, want.Source)
		}
		var s policy.Settings
		if err := json.Unmarshal(p.Settings, &s); err != nil {
			t.Errorf("%s: settings do not read back: %v", p.Name, err)
			continue
		}
		if !s.Equal(want.Settings) {
			t.Errorf("%s: settings read back as %+v, want %+v", p.Name, s, want.Settings)
		}
		again, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, p.Settings); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, compact.Bytes()) {
			t.Errorf("%s: settings write back as\n%s\nwant\n%s", p.Name, again, compact.Bytes())
		}
	}
}

func TestProfilesUsage(t *testing.T) {
	for _, args := range [][]string{{"profiles", "pi"}, {"profiles", "--bogus"}, {"profiles", "--json=maybe"}, {"profiles", "--json", "x"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, out, errOut := runMain(t, args...)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d; stdout:\n%s\nstderr:\n%s", code, exitUsage, out, errOut)
			}
			if out != "" {
				t.Errorf("stdout not empty:\n%s", out)
			}
			if !strings.Contains(errOut, "Usage: retrysim profiles [flags]") {
				t.Errorf("stderr lacks the usage line:\n%s", errOut)
			}
		})
	}
	code, out, _ := runMain(t, "profiles", "--help")
	for _, want := range []string{"Usage: retrysim profiles [flags]\n", "--json", "MAXWAIT_MS", "SPEC.md §14"} {
		if code != exitOK || !strings.Contains(out, want) {
			t.Errorf("profiles --help: exit %d, lacks %q:\n%s", code, want, out)
		}
	}
}

// TestProfileScenarioFiles checks the layout of scenarios/profiles (the
// profiles' upstream vectors as scenario files, SPEC.md §14): one directory
// per profile, every profile has one, and each file names its profile and
// scenario after its place, describes its upstream test with its
// repository@commit (or @vX.Y.Z, a release measured through the proxy) and has an expect block with events and a final state.
// (Running them is the engine's and the loader's: run scenarios/.)
func TestProfileScenarioFiles(t *testing.T) {
	const root = "../../../scenarios/profiles"
	dirs, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	total := 0
	for _, d := range dirs {
		if !d.IsDir() {
			t.Errorf("%s: not a directory (want one directory per profile)", d.Name())
			continue
		}
		got = append(got, d.Name())
		if _, err := policy.ProfileByName(d.Name()); err != nil {
			t.Errorf("directory %s: %v", d.Name(), err)
		}
		files, err := filepath.Glob(filepath.Join(root, d.Name(), "*.yaml"))
		if err != nil || len(files) == 0 {
			t.Errorf("directory %s has no scenario files (%v)", d.Name(), err)
		}
		for _, f := range files {
			total++
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var sc struct {
				Name, Description, Profile string
				Expect                     struct {
					Events []map[string]any
					Final  map[string]any
				}
			}
			if err := yaml.Unmarshal(b, &sc); err != nil {
				t.Errorf("%s: %v", f, err)
				continue
			}
			stem := strings.TrimSuffix(filepath.Base(f), ".yaml")
			if sc.Profile != d.Name() || sc.Name != d.Name()+"/"+stem {
				t.Errorf("%s: profile %q, name %q; want %q, %q", f, sc.Profile, sc.Name, d.Name(), d.Name()+"/"+stem)
			}
			if !regexp.MustCompile(`[\w.-]+/[\w.-]+@([0-9a-f]{7,}|v\d+\.\d+\.\d+)`).MatchString(sc.Description) {
				t.Errorf("%s: the description names no upstream repository@commit", f)
			}
			if len(sc.Expect.Events) == 0 || len(sc.Expect.Final) == 0 {
				t.Errorf("%s: no expect.events or expect.final", f)
			}
		}
	}
	if strings.Join(got, " ") != strings.Join(sortedCopy(profileNames), " ") {
		t.Errorf("profile directories %v, want one per profile %v", got, sortedCopy(profileNames))
	}
	t.Logf("%d scenario files", total)
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}
