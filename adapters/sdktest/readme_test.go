package sdktest_test

import (
	"bytes"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/internal/testkit"
	"github.com/ohmypi/retryfsm/proxy"
	"github.com/ohmypi/retryfsm/proxy/proxytest"
	"github.com/ohmypi/retryfsm/scenario"
)

// readmeEmbedding is README.md's section that embeds the library in a
// fresh module.
const readmeEmbedding = "## Embedding: retry one call"

// saveProgramRE finds where the text says to save the Go block.
var saveProgramRE = regexp.MustCompile("(?i)save this program as `([^`]+)`")

// TestReadmeEmbedding builds a fresh module as README.md's embedding
// section says and runs it: it saves the section's Go block under the name
// the text gives, next to a folder retryfsm that is this repository (as a
// clone would be), runs the section's shell block as written (sh -e, so
// every command must succeed; GOFLAGS=-mod=mod, the module proxy
// reachable), with ANTHROPIC_BASE_URL pointing at a proxy on loopback that
// answers a 529 with a hint of 0 ms (so the retry waits no time) and then
// the canned text. The program must print the text, log the retry, and
// the proxy must have seen both requests. When README's program no longer
// compiles against the library's API, go run fails, and so does this test.
// Building the fresh module (go mod tidy, the SDK) takes longer than a unit
// test should: it is opt-in (RETRYSIM_README=1; .ci/run sets it).
func TestReadmeEmbedding(t *testing.T) {
	testkit.Need(t, testkit.README, "a fresh module built with go mod tidy and go run")
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command on $PATH: %v", err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	program, file, shell := embeddingBlocks(t, string(readme))

	dir := t.TempDir()
	if err := os.Symlink(root, filepath.Join(dir, "retryfsm")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(file)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, file), []byte(program), 0o644); err != nil {
		t.Fatal(err)
	}

	var wireLog bytes.Buffer
	p, err := proxy.New(proxy.Options{Script: proxy.Script{Turns: []scenario.Turn{
		proxytest.ErrTurn(529, "Overloaded", map[string]string{"retry-after-ms": "0"}),
		proxytest.OkTurn(),
	}}, Log: &wireLog})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)

	cmd := exec.CommandContext(t.Context(), "sh", "-e", "-c", shell)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"PATH="+filepath.Dir(goBin)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"GOFLAGS=-mod=mod", "GOWORK=off",
		"ANTHROPIC_BASE_URL="+srv.URL, "ANTHROPIC_API_KEY=test")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	srv.Close()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if runErr != nil {
		t.Fatalf("README's embedding commands failed (%v):\n%s\nstdout:\n%s\nstderr:\n%s", runErr, shell, stdout.String(), stderr.String())
	}

	if got, want := stdout.String(), proxy.DefaultText+"\n"; got != want {
		t.Errorf("the program printed %q, want %q (the proxy's answer); stderr:\n%s", got, want, stderr.String())
	}
	for _, want := range []string{"auto_retry_start 1/2 in 0s: 529 ", "auto_retry_end success after 1"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("the program's log has no %q:\n%s", want, stderr.String())
		}
	}
	records := proxytest.ReadLog(t, wireLog.Bytes())
	if len(records) != 2 || records[0].Status != 529 || records[1].Status != 200 {
		t.Errorf("the proxy saw %d requests, want a 529 then a 200:\n%s", len(records), wireLog.String())
	}
}

// embeddingBlocks returns the Go block of README's embedding section, the
// file the text before it says to save it as, and the section's shell
// block; the Go block must come first (the shell block runs go mod tidy
// over it).
func embeddingBlocks(t *testing.T, readme string) (program, file, shell string) {
	t.Helper()
	_, section, found := strings.Cut(readme, "\n"+readmeEmbedding+"\n")
	if !found {
		t.Fatalf("README.md has no %q section", readmeEmbedding)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	prose, rest, found := strings.Cut(section, "```go\n")
	if !found {
		t.Fatalf("README's %q section has no Go block", readmeEmbedding)
	}
	program, rest, found = strings.Cut(rest, "```\n")
	if !found {
		t.Fatalf("README's %q Go block is not closed", readmeEmbedding)
	}
	m := saveProgramRE.FindStringSubmatch(strings.Join(strings.Fields(prose), " "))
	if m == nil {
		t.Fatalf("README's %q section does not say \"save this program as `FILE`\" before its Go block", readmeEmbedding)
	}
	file = m[1]
	if filepath.IsAbs(file) || strings.Contains(file, "..") {
		t.Fatalf("README saves the program as %q: not a path inside the folder next to the clone", file)
	}
	_, rest, found = strings.Cut(rest, "```sh\n")
	if !found {
		t.Fatalf("README's %q section has no sh block after its Go block", readmeEmbedding)
	}
	shell, _, found = strings.Cut(rest, "```\n")
	if !found {
		t.Fatalf("README's %q sh block is not closed", readmeEmbedding)
	}
	for _, want := range []string{
		"go mod init ",
		"go mod edit -replace github.com/ohmypi/retryfsm=../retryfsm\n",
		"go mod edit -replace github.com/ohmypi/retryfsm/adapters=../retryfsm/adapters\n",
		"go mod tidy",
		"go run .",
	} {
		if !strings.Contains(shell, want) {
			t.Errorf("README's %q sh block lacks %q:\n%s", readmeEmbedding, want, shell)
		}
	}
	return program, file, shell
}
