package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/explore"
	"github.com/ohmypi/retryfsm/policy"
)

func TestCheckSound(t *testing.T) {
	code, out, errOut := runMain(t, "check")
	if code != exitOK || lastLine(out) != "# states=66 transitions=488 violations=0" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// The invariants checked and the range come first, as comments.
	if !strings.HasPrefix(out, "# retrysim check: variant sound, maxRetries 3\n# invariants checked") {
		t.Errorf("no heading:\n%s", out)
	}
	for _, inv := range explore.Invariants() {
		if !strings.Contains(out, "#   "+inv.String()+": "+inv.Description()+"\n") {
			t.Errorf("invariant %s not listed:\n%s", inv, out)
		}
	}
	for line := range strings.Lines(out) {
		if !strings.HasPrefix(line, "# ") {
			t.Errorf("line %q is not a comment: with no violation, stdout is all comments", line)
		}
	}
	code, out, _ = runMain(t, "check", "--max-retries-upto", "10")
	if code != exitOK || !strings.HasSuffix(out, "violations=0\n") || !strings.Contains(out, "maxRetries 0 to 10\n") {
		t.Fatalf("upto 10: exit %d, stdout %q", code, out)
	}
}

func TestCheckOriginal(t *testing.T) {
	code, out, _ := runMain(t, "check", "--variant", "original")
	if code != exitFail {
		t.Fatalf("exit %d, want 1", code)
	}
	for _, want := range []string{"violations=4\n", "# violation: attempt-zero-outside-chain\n",
		"# violation: chain-ends (maxRetries 3): path [prompt reply:retryable fire_timer fire_timer reply:fatal] (--out DIR writes its scenario file)\n",
		"# violation: prompt-resolves (maxRetries 3): path",
		"{t: 2006, type: auto_retry_end, success: true, attempt: 1}"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	_, again, _ := runMain(t, "check", "--variant", "original")
	if again != out {
		t.Error("output is not byte-stable")
	}
	// stdout is a valid scenario file: the first counterexample, which
	// retrysim run replays and passes.
	stdoutFile := filepath.Join(t.TempDir(), "stdout.yaml")
	if err := os.WriteFile(stdoutFile, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, runOut, errOut := runMain(t, "run", stdoutFile); code != exitOK || !strings.Contains(runOut, "1 passed, 0 failed") {
		t.Fatalf("check's stdout as a scenario file: run exit %d\n%s%s", code, runOut, errOut)
	}
	// --out writes files that retrysim run replays and passes.
	dir := t.TempDir()
	code, out, errOut := runMain(t, "check", "--variant", "original", "--out", dir)
	if code != exitFail || !strings.Contains(out, "\n# states=") || strings.Contains(out, "\nname:") {
		t.Fatalf("--out: exit %d, %q %q", code, out, errOut)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if len(files) != 4 { // one per violated invariant, H19 included
		t.Fatalf("wrote %v", files)
	}
	code, out, errOut = runMain(t, "run", dir)
	if code != exitOK || !strings.Contains(out, "4 passed, 0 failed") {
		t.Fatalf("run %s: exit %d\n%s%s", dir, code, out, errOut)
	}
	b, _ := os.ReadFile(files[0])
	if !strings.Contains(string(b), "variant: original") || !strings.Contains(string(b), "expect:") {
		t.Errorf("file lacks variant/expect:\n%s", b)
	}
}

func TestCheckBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"check", "--variant", "nope"},
		{"check", "--max-retries", "-1"},
		{"check", "--max-retries-upto", "99"},
		{"check", "--bogus"},
		{"check", "extra"},
	} {
		if code, _, _ := runMain(t, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

// TestCheckMaxRetriesLimit: above the variant's limit check exits 2 before
// exploring anything, naming the allowed range; the limit is per variant.
func TestCheckMaxRetriesLimit(t *testing.T) {
	over := strconv.Itoa(explore.OriginalMaxRetriesLimit + 1)
	for _, args := range [][]string{
		{"check", "--variant", "original", "--max-retries", over},
		{"check", "--variant", "original", "--max-retries-upto", over},
		{"check", "--variant", "original", "--max-retries", "20"},
		{"check", "--max-retries", strconv.Itoa(explore.SoundMaxRetriesLimit + 1)},
	} {
		code, out, errOut := runMain(t, args...)
		if code != exitUsage || out != "" {
			t.Errorf("%v: exit %d, stdout %q; want 2 and nothing explored", args, code, out)
		}
		lim := explore.OriginalMaxRetriesLimit
		if args[1] != "--variant" {
			lim = explore.SoundMaxRetriesLimit
		}
		if want := fmt.Sprintf("allowed: 0 to %d", lim); !strings.Contains(errOut, want) {
			t.Errorf("%v: stderr lacks %q:\n%s", args, want, errOut)
		}
	}
	// Sound's limit itself runs (in milliseconds); the original's is
	// tested without exploring in explore's TestValidateMaxRetriesBoundary.
	lim := strconv.Itoa(explore.SoundMaxRetriesLimit)
	for _, f := range []string{"--max-retries", "--max-retries-upto"} {
		code, out, errOut := runMain(t, "check", f, lim)
		if code != exitOK || !strings.HasSuffix(out, "violations=0\n") {
			t.Errorf("sound %s %s: exit %d, %q %q", f, lim, code, out, errOut)
		}
	}
}

// TestCheckMaxRetriesFlagsExclusive: --max-retries with --max-retries-upto
// is a usage error, and the help says so.
func TestCheckMaxRetriesFlagsExclusive(t *testing.T) {
	code, out, errOut := runMain(t, "check", "--max-retries", "2", "--max-retries-upto", "3")
	if code != exitUsage || out != "" || !strings.Contains(errOut, "not both") {
		t.Errorf("exit %d, stdout %q, stderr %q; want 2 and a message", code, out, errOut)
	}
	_, help, _ := runMain(t, "check", "--help")
	for _, want := range []string{"not with --max-retries", "original 0 to " + strconv.Itoa(explore.OriginalMaxRetriesLimit),
		"sound 0 to " + strconv.Itoa(explore.SoundMaxRetriesLimit)} {
		if !strings.Contains(help, want) {
			t.Errorf("check --help lacks %q:\n%s", want, help)
		}
	}
}

// TestCheckProfiles: check --profile NAME explores each of the nine
// profiles' settings at the profile's own maxRetries (unless a range flag
// says otherwise) and finds no violation; the default profile is the
// default exploration, byte for byte.
func TestCheckProfiles(t *testing.T) {
	_, plain, _ := runMain(t, "check")
	_, listing, _ := runMain(t, "profiles")
	n := 0
	for _, p := range policy.Profiles() {
		n++
		if !strings.Contains(listing, p.Name) {
			t.Errorf("profiles does not list %s", p.Name)
		}
		code, out, errOut := runMain(t, "check", "--profile", p.Name)
		if code != exitOK || !strings.HasPrefix(lastLine(out), "# states=") || !strings.HasSuffix(out, " violations=0\n") || !strings.Contains(out, ", profile "+p.Name+", maxRetries ") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", p.Name, code, out, errOut)
			continue
		}
		_, own, _ := runMain(t, "check", "--profile", p.Name, "--max-retries", strconv.Itoa(p.Settings.MaxRetries))
		if own != out {
			t.Errorf("%s: without --max-retries %q, with the profile's own %d %q", p.Name, out, p.Settings.MaxRetries, own)
		}
		if p.Name == policy.DefaultProfile && withoutHeading(out) != withoutHeading(plain) {
			t.Errorf("%s: %q, the default check %q", p.Name, out, plain)
		}
	}
	if n != len(policy.Profiles()) {
		t.Errorf("%d profiles checked, want all %d", n, len(policy.Profiles()))
	}
	// A range flag replaces the profile's maxRetries.
	_, one, _ := runMain(t, "check", "--profile", "omp-2026-06", "--max-retries", "1")
	_, ten, _ := runMain(t, "check", "--profile", "omp-2026-06")
	_, upto, _ := runMain(t, "check", "--profile", "omp-2026-06", "--max-retries-upto", "2")
	if one == ten || upto == ten || !strings.HasSuffix(one, " violations=0\n") || !strings.HasSuffix(upto, " violations=0\n") {
		t.Errorf("maxRetries 1 %q, 0..2 %q, the profile's 10 %q", one, upto, ten)
	}
	_, help, _ := runMain(t, "check", "--help")
	for _, want := range []string{"--profile", "the profile's own", "anthropic-sdk"} {
		if !strings.Contains(help, want) {
			t.Errorf("check --help lacks %q:\n%s", want, help)
		}
	}
}

// TestCheckProfileFlags: an unknown profile, or a profile with opt-in
// settings on the original variant, is a usage error naming the problem,
// before exploring; the original takes the default profile (its
// counterexamples as without it, the files named after the profile).
func TestCheckProfileFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"check", "--profile", "nope"}, "--profile"},
		{[]string{"check", "--variant", "original", "--profile", "omp-2026-06"}, "variant original allows only profile omp-2026-02"},
		{[]string{"check", "--profile", "pi", "--max-retries", "21"}, "allowed: 0 to 20"},
	} {
		code, out, errOut := runMain(t, tc.args...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and %q", tc.args, code, out, errOut, tc.want)
		}
	}
	_, plain, _ := runMain(t, "check", "--variant", "original")
	code, out, _ := runMain(t, "check", "--variant", "original", "--profile", policy.DefaultProfile)
	if code != exitFail || withoutHeading(out) != withoutHeading(plain) {
		t.Errorf("original with the default profile: exit %d, output differs from without it", code)
	}
	dir := t.TempDir()
	if code, _, errOut := runMain(t, "check", "--variant", "original", "--profile", policy.DefaultProfile, "--out", dir); code != exitFail {
		t.Fatalf("--out: exit %d %s", code, errOut)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "check-original-"+policy.DefaultProfile+"-*.yaml"))
	if len(files) != 4 { // one per violated invariant, H19 included
		t.Errorf("wrote %v", files)
	}
}

// withoutHeading is check's output without its first line, which names
// the variant, the profile and the range.
func withoutHeading(out string) string {
	_, rest, _ := strings.Cut(out, "\n")
	return rest
}
