package cli

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/scenario"
)

var updateReadme = flag.Bool("update", false, "rewrite the state diagrams of README.md and SPEC.md from the code")

const (
	readmePath = "../../../README.md"
	specPath   = "../../../SPEC.md"
)

func readDoc(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// generatedBlockRE matches the generated block name of a document, as
// policy's TestSpecInSync writes them: the markers and what is between.
func generatedBlockRE(name string) *regexp.Regexp {
	return regexp.MustCompile(`(?s)(<!-- BEGIN ` + regexp.QuoteMeta(name) + ` -->\n)(.*?)(<!-- END ` + regexp.QuoteMeta(name) + ` -->)`)
}

// TestReadmeDiagramInSync: SPEC.md's §3.2 diagram and README.md's state
// diagram are what "retrysim graph --format mermaid" prints for the sound
// variant (run `go test ./cmd/internal/cli -run TestReadmeDiagramInSync
// -update` to write them from the code).
func TestReadmeDiagramInSync(t *testing.T) {
	code, out, errOut := runMain(t, "graph", "--format", "mermaid")
	if code != exitOK || errOut != "" {
		t.Fatalf("graph: exit %d, stderr:\n%s", code, errOut)
	}
	want := "```mermaid\n" + out + "```\n"
	re := generatedBlockRE("sound-mermaid")
	for _, path := range []string{specPath, readmePath} {
		doc := readDoc(t, path)
		m := re.FindStringSubmatch(doc)
		if m == nil {
			t.Errorf("%s has no <!-- BEGIN sound-mermaid --> ... <!-- END sound-mermaid --> block", path)
			continue
		}
		if m[2] == want {
			continue
		}
		if *updateReadme {
			doc = strings.Replace(doc, m[0], m[1]+want+m[3], 1)
			if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("%s's diagram is not what retrysim graph --format mermaid prints; run go test ./cmd/internal/cli -run TestReadmeDiagramInSync -update\n--- graph\n%s--- %s\n%s", path, want, path, m[2])
	}
}

// markdownSection returns the section of doc that starts with the line
// heading and ends before the next heading of the same level.
func markdownSection(t *testing.T, doc, heading string) string {
	t.Helper()
	i := strings.Index(doc, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("README.md has no %q section", heading)
	}
	rest := doc[i+1:]
	level := heading[:strings.Index(heading, " ")+1]
	if j := strings.Index(rest[len(heading):], "\n"+level); j >= 0 {
		return rest[:len(heading)+j+1]
	}
	return rest
}

// fence is a fenced code block, with the prose between the previous
// block and this one.
type fence struct {
	prose string // the preceding prose, lines joined by spaces
	lang  string
	body  string
	line  int // of the opening fence in the section
}

// fences splits a markdown section into its fenced code blocks; the prose
// after the last block is returned apart.
func fences(t *testing.T, section string) (blocks []fence, tail string) {
	t.Helper()
	var prose []string
	lines := strings.Split(section, "\n")
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "```") {
			prose = append(prose, strings.TrimSpace(lines[i]))
			continue
		}
		f := fence{prose: strings.Join(prose, " "), lang: strings.TrimPrefix(lines[i], "```"), line: i + 1}
		prose = nil
		var body []string
		for i++; i < len(lines) && lines[i] != "```"; i++ {
			body = append(body, lines[i])
		}
		if i == len(lines) {
			t.Fatalf("code block at line %d of the section is not closed", f.line)
		}
		f.body = strings.Join(body, "\n") + "\n"
		blocks = append(blocks, f)
	}
	return blocks, strings.Join(prose, " ")
}

var (
	saveAsRE = regexp.MustCompile("(?i)save this as `([^`]+)`")
	changeRE = regexp.MustCompile("(?i)change `([^`]+)` to `([^`]+)`")
)

// TestReadmeTutorial replays README.md's tutorial in a temporary
// directory: it saves the YAML block under the name the text gives
// ("Save this as `F`"), applies the edits the text asks for ("change `A`
// to `B`") in order, and runs each "$ retrysim ..." command of the console
// blocks, whose following lines must be exactly what the command prints
// (exit status 1 when it prints a FAIL line, 0 otherwise, nothing on
// stderr). The scenario paths the tutorial names must exist.
func TestReadmeTutorial(t *testing.T) {
	section := markdownSection(t, readDoc(t, readmePath), "## Tutorial: a scenario in five minutes")
	blocks, tail := fences(t, section)
	root, err := filepath.Abs(filepath.Dir(readmePath))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())

	file := "" // the scenario file written last
	ran := map[string]int{}
	edits := 0
	for _, b := range blocks {
		for _, m := range changeRE.FindAllStringSubmatch(b.prose, -1) {
			if file == "" {
				t.Fatalf("block at line %d: the text asks to change %q before any file was saved", b.line, m[1])
			}
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(string(data), m[1]); n != 1 {
				t.Fatalf("block at line %d: %q occurs %d times in %s, want once", b.line, m[1], n, file)
			}
			if err := os.WriteFile(file, []byte(strings.Replace(string(data), m[1], m[2], 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			edits++
		}
		switch b.lang {
		case "yaml":
			m := saveAsRE.FindStringSubmatch(b.prose)
			if m == nil {
				t.Fatalf("YAML block at line %d: the text before it does not say \"Save this as `FILE`\"", b.line)
			}
			file = m[1]
			if err := os.WriteFile(file, []byte(b.body), 0o644); err != nil {
				t.Fatal(err)
			}
		case "console":
			for _, c := range consoleCommands(t, b) {
				args := strings.Fields(strings.TrimPrefix(c.cmd, "$ retrysim "))
				code, out, errOut := runMain(t, args...)
				want := exitOK
				if regexp.MustCompile(`(?m)^FAIL `).MatchString(c.out) {
					want = exitFail
				}
				if code != want || errOut != "" {
					t.Errorf("%s: exit %d, want %d; stderr:\n%s", c.cmd, code, want, errOut)
				}
				if out != c.out {
					t.Errorf("%s (block at line %d): README.md shows\n%s\nbut it prints\n%s", c.cmd, b.line, c.out, out)
				}
				ran[args[0]]++
			}
		}
	}
	if file == "" || edits == 0 || ran["run"] < 2 || ran["trace"] < 1 {
		t.Fatalf("the tutorial lost a step: scenario file %q, %d edits, commands run %v", file, edits, ran)
	}
	for _, m := range regexp.MustCompile("`(scenarios/[^`]*)`").FindAllStringSubmatch(section+tail, -1) {
		if _, err := os.Stat(filepath.Join(root, m[1])); err != nil {
			t.Errorf("the tutorial names %s, which does not exist: %v", m[1], err)
		}
	}
}

type consoleCommand struct {
	cmd string // "$ retrysim ..."
	out string // the lines after it, each ending in "\n"
}

// consoleCommands splits a console block into commands and their outputs.
func consoleCommands(t *testing.T, b fence) []consoleCommand {
	t.Helper()
	var cmds []consoleCommand
	for _, line := range strings.SplitAfter(strings.TrimSuffix(b.body, "\n"), "\n") {
		if strings.HasPrefix(line, "$ ") {
			cmd := strings.TrimSuffix(line, "\n")
			if !strings.HasPrefix(cmd, "$ retrysim ") || strings.ContainsAny(cmd[2:], "|;&<>'\"`$\\") {
				t.Fatalf("console block at line %d: %q is not a plain retrysim command", b.line, cmd)
			}
			cmds = append(cmds, consoleCommand{cmd: cmd})
			continue
		}
		if len(cmds) == 0 {
			t.Fatalf("console block at line %d does not start with a $ command", b.line)
		}
		cmds[len(cmds)-1].out += strings.TrimSuffix(line, "\n") + "\n"
	}
	return cmds
}

// TestReadmeVersionFormat: README.md's Install section quotes the form of
// "retrysim version" and gives examples of that form.
func TestReadmeVersionFormat(t *testing.T) {
	install := markdownSection(t, readDoc(t, readmePath), "## Install")
	if !strings.Contains(install, "`"+versionSynopsis+"`") {
		t.Errorf("the Install section does not quote the version line's form `%s`", versionSynopsis)
	}
	examples := regexp.MustCompile("`(retrysim (?:v[0-9]|\\()[^`]*)`").FindAllStringSubmatch(install, -1)
	if len(examples) < 2 {
		t.Fatalf("the Install section has %d example version lines, want at least 2", len(examples))
	}
	for _, m := range examples {
		if !versionLineRE.MatchString(m[1]) {
			t.Errorf("the example %q does not have the form %s", m[1], versionSynopsis)
		}
	}
}

// TestReadmeSettingsExample: the settings block of README's "Retry
// settings and profiles" section is valid as a scenario's settings (every
// key known, every value allowed) and means what its comments say.
func TestReadmeSettingsExample(t *testing.T) {
	doc := readDoc(t, readmePath)
	sec := doc[strings.Index(doc, "## Retry settings and profiles"):]
	m := regexp.MustCompile("(?s)```yaml\n(settings:\n.*?)```").FindStringSubmatch(sec)
	if m == nil {
		t.Fatal("README's settings section has no ```yaml block starting with settings:")
	}
	src := "name: readme settings\n" + m[1] + "turns:\n  - {stopReason: stop}\n"
	sc, err := scenario.Parse("README.md", []byte(src))
	if err != nil {
		t.Fatalf("README's settings do not load: %v", err)
	}
	set := sc.Settings
	if err := set.Validate(); err != nil {
		t.Fatal(err)
	}
	if set.MaxRetries != 10 || set.MaxBackoff != 8*time.Second || set.Jitter.Mode != policy.JitterDown ||
		set.RetryAfter.Use != policy.HintFloor || set.RetryAfter.MaxWait != 5*time.Minute ||
		set.Classify != policy.ClassifyStrict || len(set.Fallback) != 1 {
		t.Errorf("README's settings read as %+v", set)
	}
}
