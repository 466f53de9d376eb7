// Package cli is the retrysim command line: the command table, its
// flags, help and errors, and every command. cmd/retrysim runs it;
// cmd/retrysim-proxy runs it with the proxy's HTTP server linked in
// (Main's option WithProxy), so that retrysim itself links no HTTP stack (SPEC.md
// §18.4). The commands are documented in cmd/retrysim.
package cli
