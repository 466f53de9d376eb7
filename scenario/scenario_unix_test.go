//go:build unix

package scenario

import (
	"os"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"
)

// TestFindScenarioFilesSkipsNonRegular: in a directory, only regular files
// (and links to them) are scenario files; a named pipe would block the
// loader forever. A path given explicitly is taken as is.
func TestFindScenarioFilesSkipsNonRegular(t *testing.T) {
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "a.yaml"), []byte("{}"), 0o644))
	must(syscall.Mkfifo(filepath.Join(dir, "b-fifo.yaml"), 0o644))
	must(os.Mkdir(filepath.Join(dir, "c-dir.json"), 0o755))
	must(os.Symlink("a.yaml", filepath.Join(dir, "d-link.yaml")))
	must(os.Symlink("b-fifo.yaml", filepath.Join(dir, "e-link-to-fifo.yml")))
	must(os.Symlink("nowhere.yaml", filepath.Join(dir, "f-broken.yaml")))
	must(syscall.Mkfifo(filepath.Join(dir, "g-fifo.txt"), 0o644)) // not a scenario name: not mentioned
	must(os.WriteFile(filepath.Join(dir, "c-dir.json", "in.yaml"), []byte("{}"), 0o644))
	must(os.Symlink(".", filepath.Join(dir, "h-loop"))) // a link to a directory: not followed, whatever its name
	must(os.Symlink("c-dir.json", filepath.Join(dir, "i-dir.yaml")))
	must(syscall.Mkfifo(filepath.Join(dir, "c-dir.json", "j-fifo.yaml"), 0o644)) // in a subdirectory too

	wantFiles := []string{filepath.Join(dir, "a.yaml"), filepath.Join(dir, "c-dir.json", "in.yaml"), filepath.Join(dir, "d-link.yaml")}
	got, err := Files(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, wantFiles) {
		t.Errorf("Files = %q\nwant %q", got, wantFiles)
	}

	files, skipped, err := Find(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(files, wantFiles) {
		t.Errorf("Find files = %q\nwant %q", files, wantFiles)
	}
	wantSkipped := []SkippedFile{
		{filepath.Join(dir, "b-fifo.yaml"), "a named pipe"},
		{filepath.Join(dir, "c-dir.json", "j-fifo.yaml"), "a named pipe"},
		{filepath.Join(dir, "e-link-to-fifo.yml"), "a symbolic link to a named pipe"},
		{filepath.Join(dir, "f-broken.yaml"), "a broken symbolic link"},
		{filepath.Join(dir, "h-loop"), "a symbolic link to a directory"},
		{filepath.Join(dir, "i-dir.yaml"), "a symbolic link to a directory"},
	}
	if !reflect.DeepEqual(skipped, wantSkipped) {
		t.Fatalf("skipped = %q\nwant %q", skipped, wantSkipped)
	}
	if s, want := skipped[0].String(), filepath.Join(dir, "b-fifo.yaml")+": skipped: a named pipe, not a regular file"; s != want {
		t.Errorf("String() = %q, want %q", s, want)
	}

	if s, want := skipped[4].String(), filepath.Join(dir, "h-loop")+": skipped: a symbolic link to a directory, not read"; s != want {
		t.Errorf("String() = %q, want %q", s, want)
	}

	// Explicit paths are taken as they are, a named pipe included.
	fifo := filepath.Join(dir, "b-fifo.yaml")
	files, skipped, err = Find(fifo, filepath.Join(dir, "a.yaml"))
	if err != nil || !reflect.DeepEqual(files, []string{fifo, filepath.Join(dir, "a.yaml")}) || len(skipped) != 0 {
		t.Errorf("explicit paths: %q, %q, %v", files, skipped, err)
	}
	// A skipped name with control characters is printed escaped.
	if s := (SkippedFile{Path: "d/x\n\x1b[8m.yaml", What: "a socket"}).String(); s != `d/x\n\x1b[8m.yaml: skipped: a socket, not a regular file` {
		t.Errorf("String() = %q", s)
	}
}
