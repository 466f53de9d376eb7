package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/explore"
)

func TestCheckSound(t *testing.T) {
	code, out, errOut := runMain(t, "check")
	if code != exitOK || out != "states=66 transitions=488 violations=0\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, _ = runMain(t, "check", "--max-retries-upto", "10")
	if code != exitOK || !strings.HasSuffix(out, "violations=0\n") || strings.Count(out, "\n") != 1 {
		t.Fatalf("upto 10: exit %d, stdout %q", code, out)
	}
}

func TestCheckOriginal(t *testing.T) {
	code, out, _ := runMain(t, "check", "--variant", "original")
	if code != exitFail {
		t.Fatalf("exit %d, want 1", code)
	}
	for _, want := range []string{"violations=3\n", "# violation: attempt-zero-outside-chain\n",
		"# violation: chain-ends\n", "# violation: prompt-resolves\n", "unresolvedPrompts: [1]",
		"{t: 2006, type: auto_retry_end, success: true, attempt: 1}"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	_, again, _ := runMain(t, "check", "--variant", "original")
	if again != out {
		t.Error("output is not byte-stable")
	}
	// --out writes files that retrysim run replays and passes.
	dir := t.TempDir()
	code, out, errOut := runMain(t, "check", "--variant", "original", "--out", dir)
	if code != exitFail || !strings.HasPrefix(out, "states=") {
		t.Fatalf("--out: exit %d, %q %q", code, out, errOut)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if len(files) != 3 {
		t.Fatalf("wrote %v", files)
	}
	code, out, errOut = runMain(t, "run", dir)
	if code != exitOK || !strings.Contains(out, "3 passed, 0 failed") {
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
