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

// otelModule is OpenTelemetry's module path prefix (adapters/otel's).
const otelModule = "go.opentelemetry.io/"

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

// TestPolicyImportsNoOpenTelemetry checks that package policy and the
// one-call form (package retryfsm) depend on no OpenTelemetry package:
// only adapters/otel imports it.
func TestPolicyImportsNoOpenTelemetry(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not installed:", err)
	}
	for _, pkg := range []string{"github.com/ohmypi/retryfsm/policy", "github.com/ohmypi/retryfsm"} {
		out, err := exec.Command(goCmd, "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		deps := strings.Fields(string(out))
		if !slices.Contains(deps, pkg) {
			t.Fatalf("go list -deps printed no dependency list for %s:\n%s", pkg, out)
		}
		for _, dep := range deps {
			if strings.HasPrefix(dep, otelModule) {
				t.Errorf("%s depends on %s; only adapters/otel may import OpenTelemetry", pkg, dep)
			}
		}
	}
	// The check can fail: adapters/otel does depend on it.
	out, err := exec.Command(goCmd, "list", "-deps", "github.com/ohmypi/retryfsm/adapters/otel").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), otelModule+"otel/metric") {
		t.Error("adapters/otel's dependencies do not include go.opentelemetry.io/otel/metric: the check above would see nothing")
	}
}

// TestPolicyImportsNoNetHTTP checks that package policy, the library core,
// does not link net/http (and with it crypto/tls, x509, net): its one HTTP
// date is read with time.Parse, so an embedder's build and binary do not
// pay for an HTTP stack they may not use.
func TestPolicyImportsNoNetHTTP(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not installed:", err)
	}
	out, err := exec.Command(goCmd, "list", "-deps", "github.com/ohmypi/retryfsm/adapters/anthropic").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	policyDeps, err := exec.Command(goCmd, "list", "-deps", "github.com/ohmypi/retryfsm/policy").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, policyDeps)
	}
	if deps := strings.Fields(string(policyDeps)); !slices.Contains(deps, "github.com/ohmypi/retryfsm/policy") {
		t.Fatalf("go list -deps printed no dependency list for policy:\n%s", policyDeps)
	} else if slices.Contains(deps, "net/http") || slices.Contains(deps, "crypto/tls") {
		t.Errorf("policy depends on net/http or crypto/tls")
	}
	// The check can fail: an adapter (an HTTP SDK) does depend on net/http.
	if !slices.Contains(strings.Fields(string(out)), "net/http") {
		t.Errorf("adapters/anthropic's dependencies do not include net/http: the check above would see nothing")
	}
}
