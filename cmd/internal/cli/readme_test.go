package cli

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/scenario"
)

var updateReadme = flag.Bool("update", false, "rewrite the state diagrams of docs/scenarios.md and SPEC.md, and the fleet table of docs/fleet.md, from the code")

// The user documents, from this package's directory: README.md links the
// pages of docs/ that hold the rest.
const (
	readmePath   = repoRoot + "/README.md"
	specPath     = repoRoot + "/SPEC.md"
	scenariosDoc = repoRoot + "/docs/scenarios.md" // the tutorial, the state diagram, the CLI
	embeddingDoc = repoRoot + "/docs/embedding.md" // the Controller, the settings and profiles
	auditDoc     = repoRoot + "/docs/audit.md"
	fleetDoc     = repoRoot + "/docs/fleet.md" // the fleet table and its legend
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

// TestReadmeDiagramInSync: SPEC.md's §3.2 diagram and docs/scenarios.md's
// state diagram are what "retrysim graph --format mermaid" prints for the sound
// variant (run `go test ./cmd/internal/cli -run TestReadmeDiagramInSync
// -update` to write them from the code).
func TestReadmeDiagramInSync(t *testing.T) {
	code, out, errOut := runMain(t, "graph", "--format", "mermaid")
	if code != exitOK || errOut != "" {
		t.Fatalf("graph: exit %d, stderr:\n%s", code, errOut)
	}
	want := "```mermaid\n" + out + "```\n"
	re := generatedBlockRE("sound-mermaid")
	for _, path := range []string{specPath, scenariosDoc} {
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
// heading (the document's first line, or any other) and ends before the
// next heading of the same level.
func markdownSection(t *testing.T, doc, heading string) string {
	t.Helper()
	doc = "\n" + doc
	i := strings.Index(doc, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("the document has no %q section", heading)
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

// TestReadmeTutorial replays docs/scenarios.md's tutorial in a temporary
// directory: it saves the YAML block under the name the text gives
// ("Save this as `F`"), applies the edits the text asks for ("change `A`
// to `B`") in order, and runs each "$ retrysim ..." command of the console
// blocks, whose following lines must be exactly what the command prints
// (exit status 1 when it prints a FAIL line, 0 otherwise, nothing on
// stderr). The scenario paths the tutorial names must exist.
func TestReadmeTutorial(t *testing.T) {
	section := markdownSection(t, readDoc(t, scenariosDoc), "## Tutorial: a scenario in five minutes")
	blocks, tail := fences(t, section)
	root, err := filepath.Abs(repoRoot)
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
					t.Errorf("%s (block at line %d): docs/scenarios.md shows\n%s\nbut it prints\n%s", c.cmd, b.line, c.out, out)
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

// TestReadmeSettingsExample: the settings block of docs/embedding.md's
// "Retry settings and profiles" section is valid as a scenario's settings (every
// key known, every value allowed) and means what its comments say.
func TestReadmeSettingsExample(t *testing.T) {
	sec := markdownSection(t, readDoc(t, embeddingDoc), "## Retry settings and profiles")
	m := regexp.MustCompile("(?s)```yaml\n(settings:\n.*?)```").FindStringSubmatch(sec)
	if m == nil {
		t.Fatal("docs/embedding.md's settings section has no ```yaml block starting with settings:")
	}
	src := "name: readme settings\n" + m[1] + "turns:\n  - {stopReason: stop}\n"
	sc, err := scenario.Parse("docs/embedding.md", []byte(src))
	if err != nil {
		t.Fatalf("docs/embedding.md's settings do not load: %v", err)
	}
	set := sc.Settings
	if err := set.Validate(); err != nil {
		t.Fatal(err)
	}
	if set.MaxRetries != 10 || set.MaxBackoff != 8*time.Second || set.Jitter.Mode != policy.JitterDown ||
		set.RetryAfter.Use != policy.HintFloor || set.RetryAfter.MaxWait != 5*time.Minute ||
		set.Classify != policy.ClassifyStrict || len(set.Fallback) != 1 {
		t.Errorf("docs/embedding.md's settings read as %+v", set)
	}
}

// userDocs lists the user documents: README.md, CHANGELOG.md and every
// page of docs/ (SPEC.md, which may cite tests and history, is not one).
func userDocs(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(repoRoot + "/docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 {
		t.Fatal("docs/ has no pages")
	}
	return append([]string{readmePath, repoRoot + "/CHANGELOG.md"}, pages...)
}

// setupBlock is how README.md starts: its title, then the two set-up
// commands in one sh block.
const setupBlock = "```sh\ngo run ./cmd/retrysim run scenarios/\ngo test ./...\n```\n"

// TestReadmeShape: README.md has at most 300 lines, starts (after its
// title) with the two set-up commands in one sh block, and links every page
// of docs/ and CHANGELOG.md; every relative link of the user documents
// reaches a file, and the heading when it names one.
func TestReadmeShape(t *testing.T) {
	readme := readDoc(t, readmePath)
	if n := strings.Count(readme, "\n"); n > 300 {
		t.Errorf("README.md has %d lines, want at most 300: move the details to a page of docs/", n)
	}
	title, rest, _ := strings.Cut(readme, "\n")
	if !strings.HasPrefix(title, "# ") || !strings.HasPrefix(rest, "\n"+setupBlock) {
		t.Errorf("README.md does not start with its title and then\n%s", setupBlock)
	}
	linked := map[string]bool{}
	for _, path := range userDocs(t) {
		doc := readDoc(t, path)
		for _, m := range regexp.MustCompile(`\]\(([^)\s]+)\)`).FindAllStringSubmatch(doc, -1) {
			link := m[1]
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(link, "#")
			target := path
			if file != "" {
				target = filepath.Join(filepath.Dir(path), file)
			}
			if path == readmePath {
				linked[filepath.Clean(target)] = true
			}
			data, err := os.ReadFile(target)
			if err != nil {
				t.Errorf("%s links %s, which cannot be read: %v", path, link, err)
				continue
			}
			if anchor != "" && !slices.Contains(headingAnchors(string(data)), anchor) {
				t.Errorf("%s links %s: %s has no heading whose anchor is #%s", path, link, target, anchor)
			}
		}
	}
	for _, path := range userDocs(t)[1:] {
		if !linked[filepath.Clean(path)] {
			t.Errorf("README.md does not link %s", path)
		}
	}
}

// headingAnchors returns the anchors GitHub gives the headings of a
// markdown document (lower case, spaces as hyphens, punctuation dropped),
// code blocks left out.
func headingAnchors(doc string) []string {
	var anchors []string
	inCode := false
	for line := range strings.Lines(doc) {
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
		}
		if inCode || !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		anchors = append(anchors, b.String())
	}
	return anchors
}

// noHistoryRE are what the user documents do not hold: issue numbers,
// commit hashes, and counts written by hand, which drift ("56 scenarios",
// "nine profiles": say "every scenario", or derive the number in a test).
var noHistoryRE = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\bissues?\s+#?\d+`),
	regexp.MustCompile("`[0-9a-f]*[0-9][0-9a-f]*[a-f][0-9a-f]*`|`[0-9a-f]*[a-f][0-9a-f]*[0-9][0-9a-f]*`"),
	regexp.MustCompile(`(?i)\b(\d[\d,]*|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|twenty)\s+([a-z-]+\s+)?(scenarios|scenario files|profiles|fleets)\b`),
}

// TestUserDocsNoHistory: no user document holds an issue number, a commit
// hash or a count of scenarios, profiles or fleets written by hand in its
// prose (code blocks and code spans are commands: "--seeds 1-20 fleets/").
func TestUserDocsNoHistory(t *testing.T) {
	codeSpan := regexp.MustCompile("`[^`]*`")
	for _, path := range userDocs(t) {
		inCode := false
		for i, line := range strings.Split(readDoc(t, path), "\n") {
			if strings.HasPrefix(line, "```") {
				inCode = !inCode
			}
			for k, re := range noHistoryRE {
				text := line
				if k == 2 {
					if inCode {
						continue
					}
					text = codeSpan.ReplaceAllString(line, "")
				}
				for _, m := range re.FindAllString(text, -1) {
					if k != 1 || len(m) >= 9 { // a hash: 7 hex digits or more, in backticks
						t.Errorf("%s:%d: %q: user documents hold no issue numbers, commit hashes or hand-written counts", path, i+1, m)
					}
				}
			}
		}
	}
}

// TestReadmeProfileTable: every profile README's "Which profile" table
// names is one (retrysim profiles lists it), and the row that says "the
// default" names the default profile.
func TestReadmeProfileTable(t *testing.T) {
	section := markdownSection(t, readDoc(t, readmePath), "## Which profile")
	rows := 0
	for line := range strings.Lines(section) {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") || strings.TrimSpace(cells[2]) == "pick" {
			continue
		}
		rows++
		names := regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(cells[2], -1)
		if len(names) == 0 {
			t.Errorf("a row of the profile table names no profile: %s", line)
		}
		for _, m := range names {
			if _, err := policy.ProfileByName(m[1]); err != nil {
				t.Errorf("the profile table names %q: %v", m[1], err)
			}
		}
		if strings.Contains(cells[3], "the default") && (len(names) != 1 || names[0][1] != policy.DefaultProfile) {
			t.Errorf("the row that says it is the default names %s, want only %s", cells[2], policy.DefaultProfile)
		}
	}
	if rows < 2 {
		t.Fatalf("README's \"Which profile\" section has %d rows of profiles", rows)
	}
}
