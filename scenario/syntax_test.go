package scenario

import (
	"strings"
	"testing"
)

// TestScenarioParsePanicIsNotAnError checks that Parse turns only its own
// bail-out into an error: a bug (here a nil dereference) still panics.
func TestScenarioParsePanicIsNotAnError(t *testing.T) {
	defer func() { scnTestHook = nil }()
	scnTestHook = func() {
		var p *Scenario
		_ = p.Name // nil dereference
	}
	var err error
	r := func() (r any) {
		defer func() { r = recover() }()
		_, err = Parse("t.yaml", []byte("name: x\n"))
		return nil
	}()
	if r == nil {
		t.Fatalf("no panic; error %v", err)
	}
	if re, ok := r.(error); !ok || !strings.Contains(re.Error(), "nil pointer dereference") {
		t.Errorf("panic %v, want the nil dereference", r)
	}
}
