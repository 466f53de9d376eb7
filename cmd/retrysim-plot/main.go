// Command retrysim-plot draws a fleet's result as charts (package
// fleetplot, SPEC.md §15.7): one image, a row per fleet, its wire
// calls per second over time per profile (the provider's capacity a line,
// the outage windows shaded, the table's peak marked), the CDF of the time
// from a prompt to its success over every prompt (the failed and
// still-waiting prompts the gap below 100 %), and each row's requests per
// prompt with its 429s.
//
// Usage:
//
//	retrysim-plot [-o FILE.png|FILE.svg] PARTIAL...
//	retrysim-plot -tune [-o FILE.png|FILE.svg] REPORT
//
// Each PARTIAL is a partial result written by 'retrysim fleet --json
// --shard I/N' (a whole sweep is the one shard 0/1; merged shards are one
// with 'retrysim fleet merge --json --shard 0/1'), or - for one read
// from stdin; the partials of every shard of a split are merged as
// 'retrysim fleet merge' merges them, and the merged result is drawn to
// FILE (default fleet.png):
//
//	go run ./cmd/retrysim fleet --seeds 1-8 --json --shard 0/1 fleets/outage.yaml > sweep.json
//	(cd cmd/retrysim-plot && go install .) && retrysim-plot -o sweep.png sweep.json
//
// With -tune, REPORT is a tune's report ('retrysim tune --json'; - reads
// it from stdin), drawn by package tuneplot: its confirmed
// candidates, its front, its chosen point and the named profiles, a panel
// per objective against the first; 'retrysim tune --plot FILE' pipes its
// report to 'retrysim-plot -tune -o FILE -'.
//
// The charts are a command of their own so that retrysim, the first
// command a user builds, links no chart library: gonum.org/v1/plot, its
// fonts and its LaTeX renderer are most of a cold build (SPEC.md §15.7).
// It is a module of its own (this folder's go.mod, the only one that
// requires the chart library): install it with 'go install .' here.
// 'retrysim fleet --plot FILE' runs this command (found beside retrysim,
// then on $PATH), piping the result to 'retrysim-plot -o FILE -'.
//
// Exit status: 0 when the image was written, 1 when it could not be
// written, 2 for invalid flags, arguments or partial results.
package main

import (
	"os"

	"github.com/ohmypi/retryfsm/cmd/retrysim-plot/internal/plotcmd"
)

func main() { os.Exit(plotcmd.Main(os.Args[1:], os.Stdin, os.Stderr)) }
