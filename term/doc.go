// Package term is what people see of the retry policy in a terminal: the
// original's loader and error strings, and a player that runs one scenario
// on the real clock, printing each trace line as it happens and, during a
// backoff, the original's countdown loader, with Esc to cancel the retry
// ("retrysim run --watch").
package term
