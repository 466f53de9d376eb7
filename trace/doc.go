// Package trace is the JSON Lines trace of a simulated session (SPEC.md
// §8): a typed Record per line type, the one writer (AppendJSON, Writer),
// the one reader (Scanner, Decode), the text timeline (FormatText) and the
// conformance filter. No other package formats or parses trace lines.
//
// The bytes are a contract: the same scenario gives byte-identical traces,
// and fields are only ever added after the existing ones.
package trace

// get_state's writer, state_gen.go, is generated from SessionState's declaration.
//go:generate go test . -run TestStateWriterGenerated -update
