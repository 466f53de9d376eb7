package trace

import (
	"testing"

	"github.com/ohmypi/retryfsm/policy"
)

// TestMembersAreJSON: the members written as one piece are the ones the
// writer wrote field by field (no name needs an escape), for every type
// and every input.
func TestMembersAreJSON(t *testing.T) {
	for _, ty := range Types() {
		if got, want := typeMember[ty], `"type":"`+ty.String()+`"`; got != want {
			t.Errorf("type %d: %s, want %s", ty, got, want)
		}
	}
	for _, in := range policy.Inputs() {
		if got, want := inputMember[in], `,"input":"`+in.String()+`"`; got != want {
			t.Errorf("input %d: %s, want %s", in, got, want)
		}
	}
}
