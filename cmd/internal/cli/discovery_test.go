package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunRecursive: run DIR also runs the scenario files of DIR's
// subdirectories (scenarios/profiles/NAME/*.yaml), sorted by path, and
// leaves out those named with '.' or '_'.
func TestRunRecursive(t *testing.T) {
	dir := writeFiles(t, map[string]string{"a.yaml": passScenario})
	for _, name := range []string{"profiles/codex/01.yaml", "profiles/pi/01.yaml", "_drafts/x.yaml"} {
		full := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(passScenario), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut := runMain(t, "run", dir)
	if code != exitOK || errOut != "" {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	want := "PASS  passing  (" + filepath.Join(dir, "a.yaml") + ")\n" +
		"PASS  passing  (" + filepath.Join(dir, "profiles", "codex", "01.yaml") + ")\n" +
		"PASS  passing  (" + filepath.Join(dir, "profiles", "pi", "01.yaml") + ")\n" +
		"3 passed, 0 failed\n"
	if out != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", out, want)
	}
	if strings.Contains(out, "_drafts") {
		t.Errorf("a file under _drafts ran:\n%s", out)
	}
}
