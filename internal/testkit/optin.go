// The gate of the tests that need more than Go and the module proxy
// (node, npm, Bun, a batch scheduler, the real clock): README's
// `go test ./...` skips them, saying how to run them, and .ci/run runs
// them explicitly with the variable set. The long soak tests are opt-in
// the same way (Soak).

package testkit

import (
	"os"
	"testing"
)

// JS is the variable that runs the tests needing node, npm or Bun (and the
// JavaScript SDKs' waits on the real clock).
const JS = "RETRYSIM_JS"

// Soak is the variable that runs the long memory and flood tests
// (hundreds of thousands of prompts or log lines, the RPC flood on the
// real clock) and the simulator's property tests at CI's budget (1000
// checks each, where README's command runs 200): CI's own step, not
// README's command.
const Soak = "RETRYSIM_SOAK"

// README is the variable that runs the test building a fresh module from
// README.md's embedding section (go mod tidy, then go run: tens of seconds).
const README = "RETRYSIM_README"

// Build is the variable that runs the tests building a program from
// source with the go command as a user's clone does (a link of its own
// each: seconds), where README's command takes it from the build cache.
const Build = "RETRYSIM_BUILD"

// Need skips t unless the variable env is set to 1; what says what the
// test needs.
func Need(t testing.TB, env, what string) {
	t.Helper()
	if os.Getenv(env) != "1" {
		t.Skipf("needs %s: opt-in, run with %s=1 (.ci/run does)", what, env)
	}
}
