package policy

import (
	"errors"
	"fmt"

	"github.com/ohmypi/retryfsm/policy/retry"
)

// ErrRetryCancelled is what WaitForRetry reports for a chain that was
// cancelled: by AbortRetry, by Abort, by an aborted reply, or (wrapped) by
// Reset. Test for it with errors.Is.
var ErrRetryCancelled = errors.New("policy: retry cancelled")

// errReset is reported for a chain that Reset dropped.
var errReset = fmt.Errorf("%w: the Controller was reset", ErrRetryCancelled)

// ExhaustedError is what WaitForRetry reports for a chain that gave up:
// its auto_retry_end had success false and a finalError other than
// "Retry cancelled". Test for it with errors.As.
type ExhaustedError struct {
	// Attempt is the attempt of the auto_retry_end (0 when maxRetries is 0).
	Attempt int
	// FinalError is the auto_retry_end's finalError: the error that ended
	// the chain, the continue's error, or "Agent run ended without an
	// assistant message".
	FinalError string
	// Reason says why the chain gave up.
	Reason Reason
}

// Error implements error.
func (e *ExhaustedError) Error() string {
	return fmt.Sprintf("policy: retry gave up at attempt %d (%s): %s", e.Attempt, e.Reason, e.FinalError)
}

// chainEndKind is how a chain ended.
type chainEndKind uint8

const (
	outNone chainEndKind = iota // no chain ended (since the last OnPrompt)
	outSuccess
	outCancelled
	outReset
	outExhausted
)

// chainEnd is how a chain ended, kept as a value so that ending a chain
// allocates nothing; err builds the error WaitForRetry returns.
type chainEnd struct {
	kind    chainEndKind
	attempt int
	final   string
	reason  Reason
	// cause is why a cancelled chain was cancelled: the ctx.Err() of the
	// prompt's context, or nil for a command.
	cause error
}

func (o chainEnd) err() error {
	switch o.kind {
	case outCancelled:
		if o.cause != nil {
			return &cancelledError{cause: o.cause}
		}
		return ErrRetryCancelled
	case outReset:
		return errReset
	case outExhausted:
		return &ExhaustedError{Attempt: o.attempt, FinalError: o.final, Reason: o.reason}
	}
	return nil
}

// endOf is the chainEnd of a chain that rule r ends with auto_retry_end e.
func endOf(r *retry.Rule, e AutoRetryEnd) chainEnd {
	switch {
	case r.Success:
		return chainEnd{kind: outSuccess}
	case r.Final == retry.FinalCancelled:
		return chainEnd{kind: outCancelled}
	}
	return chainEnd{kind: outExhausted, attempt: e.Attempt, final: e.FinalError, reason: r.Reason}
}

// cancelledError is a chain cancelled because its prompt's context ended:
// it matches ErrRetryCancelled and the context's error (errors.Is).
type cancelledError struct{ cause error }

func (e *cancelledError) Error() string { return ErrRetryCancelled.Error() + ": " + e.cause.Error() }

// Unwrap returns ErrRetryCancelled and the context's error.
func (e *cancelledError) Unwrap() []error { return []error{ErrRetryCancelled, e.cause} }
