package strictfile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

// TestReadFile: a file of max bytes is read whole; one byte more is too
// large, and only max+1 bytes are read; a missing file is the open error.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{0, 1, 9, 10, 11, 5000} {
		path := filepath.Join(dir, "f")
		want := bytes.Repeat([]byte{'x'}, n)
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		data, tooLarge, err := ReadFile(path, 10)
		if err != nil {
			t.Fatal(err)
		}
		if tooLarge != (n > 10) || !bytes.Equal(data, want[:min(n, 11)]) {
			t.Errorf("%d bytes: read %d, too large %v", n, len(data), tooLarge)
		}
	}
	if _, _, err := ReadFile(filepath.Join(dir, "missing"), 10); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// TestReadAtMost: a reader giving a byte at a time is read to its end or
// to the limit, whatever the hint; its error is passed on with what was
// read.
func TestReadAtMost(t *testing.T) {
	for _, hint := range []int{0, 1, 3, 100} {
		got, err := ReadAtMost(iotest.OneByteReader(strings.NewReader("abcdef")), hint, 4)
		if err != nil || string(got) != "abcd" {
			t.Errorf("hint %d: %q, %v", hint, got, err)
		}
		got, err = ReadAtMost(iotest.OneByteReader(strings.NewReader("ab")), hint, 4)
		if err != nil || string(got) != "ab" {
			t.Errorf("hint %d, short: %q, %v", hint, got, err)
		}
	}
	got, err := ReadAtMost(iotest.TimeoutReader(strings.NewReader("abcdef")), 8, 8)
	if !errors.Is(err, iotest.ErrTimeout) || len(got) == 0 {
		t.Errorf("error: %q, %v", got, err)
	}
}
