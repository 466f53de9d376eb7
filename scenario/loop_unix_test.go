//go:build unix

package scenario

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestFindReportsASymlinkLoop: two links to each other are reported as a
// loop, not as a broken link (issue 19 §5); a broken link still is one.
func TestFindReportsASymlinkLoop(t *testing.T) {
	dir := t.TempDir()
	for _, l := range [][2]string{{"b-loop.yaml", "a-loop.yaml"}, {"a-loop.yaml", "b-loop.yaml"}, {"nowhere.yaml", "c-broken.yaml"}} {
		if err := os.Symlink(l[0], filepath.Join(dir, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	_, skipped, err := Find(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []SkippedFile{
		{filepath.Join(dir, "a-loop.yaml"), "a symbolic link loop"},
		{filepath.Join(dir, "b-loop.yaml"), "a symbolic link loop"},
		{filepath.Join(dir, "c-broken.yaml"), "a broken symbolic link"},
	}
	if !reflect.DeepEqual(skipped, want) {
		t.Errorf("skipped %q\nwant %q", skipped, want)
	}
}
