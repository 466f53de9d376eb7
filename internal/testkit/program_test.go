package testkit

import (
	"os/exec"
	"strings"
	"testing"
)

// TestProgram: the executable runs, and a second call gives the same
// path, the build cache's (nothing linked again).
func TestProgram(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not installed:", err)
	}
	path, err := Program(".", "./testdata/hello")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(path, "a", "b").Output()
	if err != nil || string(out) != "[a b]\n" {
		t.Fatalf("%s a b: %q, %v", path, out, err)
	}
	again, err := Program(".", "./testdata/hello")
	if err != nil || again != path {
		t.Errorf("the second call: %q, %v; want the cached %q", again, err, path)
	}
}

// TestProgramError: a package that does not build is the go command's
// error, which names it.
func TestProgramError(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not installed:", err)
	}
	_, err := Program(".", "./testdata/nothing")
	if err == nil || !strings.Contains(err.Error(), "testdata/nothing") {
		t.Fatalf("got %v; want the go command's error about ./testdata/nothing", err)
	}
}
