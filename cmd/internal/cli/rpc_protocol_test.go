package cli

import (
	"strings"
	"testing"
)

// TestRPCProtocolFlag: --protocol 2 speaks the newer protocol (a ready
// line first, prompt_result and session_settled at the end); 1 is the
// default, byte for byte; another version is a usage error.
func TestRPCProtocolFlag(t *testing.T) {
	in := `{"id":"p1","type":"prompt","message":"hi"}` + "\n"
	code, two, errOut := rpcSession(t, in, "--virtual", "--protocol", "2")
	if code != exitOK || !strings.HasPrefix(two, `{"type":"ready","protocolVersion":1,"supportedProtocolVersions":[1,2],`) ||
		!strings.HasSuffix(two, `{"t":0,"type":"prompt_result","id":"p1","agentInvoked":true,"status":"completed","sessionSettled":true}`+"\n"+`{"t":0,"type":"session_settled"}`+"\n") {
		t.Errorf("--protocol 2: exit %d\n%s%s", code, two, errOut)
	}
	_, def, _ := rpcSession(t, in, "--virtual")
	_, one, _ := rpcSession(t, in, "--virtual", "--protocol", "1")
	if def != one || !strings.HasSuffix(def, `{"t":0,"type":"prompt_resolved","prompt":1}`+"\n") {
		t.Errorf("--protocol 1 differs from the default:\n%s\n%s", one, def)
	}
	for _, v := range []string{"3", "0"} {
		code, _, errOut := rpcSession(t, "", "--protocol", v)
		if code != exitUsage || !strings.Contains(errOut, "--protocol "+v+": unknown (allowed: 1, the original's, or 2, oh-my-pi 18.3.4's)") {
			t.Errorf("--protocol %s: exit %d, %q", v, code, errOut)
		}
	}
}
