// Command retrysim runs retry-policy scenarios in the deterministic
// simulator: it checks their expectations, prints their traces, draws the
// retry machine, explores its state space, serves the RPC protocol,
// simulates fleets of agents sharing a provider and audits RPC logs.
//
//	retrysim run [--variant NAME] [--profile NAME] [--coverage] PATH... (- reads one scenario from stdin)
//	retrysim run --update PATH...
//	retrysim run --watch [--variant NAME] [--profile NAME] FILE
//	retrysim trace [--variant NAME] [--profile NAME] [--format jsonl|text] FILE
//	retrysim graph [--variant NAME] [--format dot|mermaid]
//	retrysim check [--variant NAME] [--profile NAME] [--max-retries N | --max-retries-upto N] [--out DIR]
//	retrysim rpc [--scenario FILE] [--variant NAME] [--profile NAME] [--virtual] [--mode rpc] [--provider P] [--model ID]
//	retrysim profiles [--json]
//	retrysim fleet [FILE...] [flags]
//	retrysim audit [--profile NAME] [--json] LOG...
//	retrysim version (or retrysim --version)
//	retrysim help [COMMAND]
//
// Exit codes: 0 success; 1 a scenario or invariant failed, or a simulation
// did not finish; 2 invalid input or usage (130 after SIGTERM or
// SIGHUP in run --watch).
package main
