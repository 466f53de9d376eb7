// Package sdktest_test holds the tests that drive the providers' real Go
// SDKs against this repository's packages: retryfsm.Do with both SDKs
// (against httptest), the proxy served to the SDKs (their retries, each
// profile's vectors, the wire faults, two layers), and the whole
// "retrysim proxy" loop. They live in the adapters module, beside the
// adapters, so that the root module's "go test ./..." does not build the
// SDKs (SPEC.md §17.3).
package sdktest_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(cleanupM{m}) }

// cleanupM runs the tests, then removes the binaries built for them.
type cleanupM struct{ *testing.M }

func (m cleanupM) Run() int {
	code := m.M.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	return code
}
