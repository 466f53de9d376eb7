package policy_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them: the
// Controller must spawn no unowned goroutine, and the mock clock's AfterFunc
// goroutines must have finished (see ctlClock.settle).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
