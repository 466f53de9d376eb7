package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTuneDoc replays docs/tune.md's tune: its "$ retrysim tune ..."
// console block must be exactly what the command prints, and the JSON
// block after it the settings file it writes. Skipped with -short (a tune
// of 72 short and 74 full runs of the example fleet: seconds).
func TestTuneDoc(t *testing.T) {
	if testing.Short() {
		t.Skip("the tune of docs/tune.md takes seconds")
	}
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	doc := readDoc(t, filepath.Join(root, "docs", "tune.md"))
	const prompt = "```console\n$ retrysim "
	i := strings.Index(doc, prompt)
	if i < 0 {
		t.Fatal("docs/tune.md has no console block of retrysim")
	}
	block := doc[i+len(prompt):]
	block = block[:strings.Index(block, "```")]
	line, want, _ := strings.Cut(block, "\n")
	args := shellWords(t, line)
	for k, a := range args {
		if strings.HasPrefix(a, "fleets/") {
			args[k] = filepath.Join(root, a)
		}
	}
	t.Chdir(t.TempDir())
	code, out, errOut := runMain(t, args...)
	if code != exitOK || errOut != "" {
		t.Fatalf("%s: exit %d, stderr %s", line, code, errOut)
	}
	if out = profilesShown(out, want); out != want {
		t.Errorf("docs/tune.md's output is not what %q prints:\n%s", line, out)
	}
	rest := doc[i+len(prompt):]
	j := strings.Index(rest, "```json\n")
	if j < 0 {
		t.Fatal("docs/tune.md has no json block after the tune")
	}
	settings := rest[j+len("```json\n"):]
	settings = settings[:strings.Index(settings, "```")]
	data, err := os.ReadFile("tuned.json")
	if err != nil || string(data) != settings {
		t.Errorf("tuned.json is %q (%v), docs/tune.md shows %q", data, err, settings)
	}
}

// profilesShown is the tune's output out with the rows of its profiles'
// table kept only for the profiles that doc's output shows, so that a
// profile added to the table needs no edit of docs/tune.md; every other
// line, and the rows shown, must still be exactly what the tune prints.
func profilesShown(out, doc string) string {
	shown := map[string]bool{}
	profileRows(doc, func(name string) bool { shown[name] = true; return true })
	return profileRows(out, func(name string) bool { return shown[name] })
}

// profileRows is text without the rows of its profiles table (from the
// line "PROFILE ..." to the next empty line) whose profile keep refuses.
func profileRows(text string, keep func(name string) bool) string {
	var kept []string
	in := false
	for _, l := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(l, "PROFILE "):
			in = true
		case l == "":
			in = false
		case in && !keep(strings.Fields(l)[0]):
			continue
		}
		kept = append(kept, l)
	}
	return strings.Join(kept, "\n")
}

// shellWords splits a command line at spaces, a '...' quoted word whole.
func shellWords(t *testing.T, line string) []string {
	var out []string
	for line != "" {
		line = strings.TrimLeft(line, " ")
		if strings.HasPrefix(line, "'") {
			end := strings.Index(line[1:], "'")
			if end < 0 {
				t.Fatalf("unclosed quote in %q", line)
			}
			out = append(out, line[1:1+end])
			line = line[2+end:]
			continue
		}
		w, rest, _ := strings.Cut(line, " ")
		if w != "" {
			out = append(out, w)
		}
		line = rest
	}
	return out
}
