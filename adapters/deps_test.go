package adapters_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// sdkModules are the module paths of the SDKs the adapters wrap.
var sdkModules = []string{
	"github.com/anthropics/anthropic-sdk-go",
	"github.com/openai/openai-go",
}

// TestPolicyImportsNoSDK checks that package policy, which every agent
// imports, depends on neither provider SDK, directly or through another
// package: only the adapters import them.
func TestPolicyImportsNoSDK(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not installed:", err)
	}
	out, err := exec.Command(goCmd, "list", "-deps", "github.com/ohmypi/retryfsm/policy").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 2 || !slices.Contains(deps, "github.com/ohmypi/retryfsm/policy") {
		t.Fatalf("go list -deps printed no dependency list for policy:\n%s", out)
	}
	for _, dep := range deps {
		for _, sdk := range sdkModules {
			if strings.HasPrefix(dep, sdk) {
				t.Errorf("policy depends on %s (an SDK package); only adapters/ may import the SDKs", dep)
			}
		}
	}
	// The check can fail: the adapters do depend on their SDK.
	out, err = exec.Command(goCmd, "list", "-deps", "github.com/ohmypi/retryfsm/adapters/anthropic", "github.com/ohmypi/retryfsm/adapters/openai").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, sdk := range sdkModules {
		if !strings.Contains(string(out), sdk) {
			t.Errorf("the adapters' dependencies do not include %s: the check above would see nothing", sdk)
		}
	}
}
