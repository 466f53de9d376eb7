package anthropic_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them (the
// test servers and the SDK's connections are closed by each test).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
