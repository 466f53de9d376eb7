// Package tune finds the retry settings a fleet should use (SPEC.md §15.11):
// it searches the retry settings' axes (maxRetries, baseDelayMs,
// maxBackoffMs, jitter, the hint mode and its bound, the fail-fast wait)
// on a fleet's provider model (package fleet) and reports the robust
// Pareto front of the objectives (the share of prompts that fail, the
// time to success's p50, p95 and p99, the provider calls per prompt, the
// peak load against the capacity), with every named profile placed
// against it.
//
// The search is a grid design over the axes, each candidate run short
// (the fleet scaled down, one seed), a refinement around the short runs'
// front (the midpoints to each front point's neighbours), then successive
// halving's one cut: the first Pareto layers of the short runs are kept
// and run in full over several seeds, and a point is on the front when no
// other's worst case over the seeds dominates its own. New designs a tune,
// Tuner.Run runs it (or one shard of it, on every core), Merge puts the
// shards' reports together; a Report's JSON is the partial result a shard
// writes and the whole tune's output alike.
package tune
