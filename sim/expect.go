package sim

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ohmypi/retryfsm/internal/jsonw"
	"github.com/ohmypi/retryfsm/scenario"
	"github.com/ohmypi/retryfsm/trace"
)

// CheckExpect returns one failure per unmet expectation of sc's expect
// block, each "file:line:col: what", in the order of the block: the events,
// then the final fields. It returns nil when sc has no expect block or every
// expectation holds.
//
// events is an ordered subsequence: each expected event must match a trace
// record after the record the previous expected event matched (trace.Match:
// every listed field present and equal, numbers compared as float64,
// objects as subsets; unlisted fields are ignored). An expected event that
// matches nothing does not move the search on, so the events after it are
// still checked from the same place.
//
// final compares state, attempt, isRetrying and unresolvedPrompts (each
// only when given) with f.
func CheckExpect(sc *scenario.Scenario, records []trace.Record, f Final) []string {
	if sc == nil || sc.Expect == nil {
		return nil
	}
	var failures []string
	cursor := 0 // number of the trace line the last expected event matched (0: start)
	for i, ev := range sc.Expect.Events {
		want := normalizeFields(ev.Fields)
		if n := findMatch(records, cursor, len(records), want); n > 0 {
			cursor = n
			continue
		}
		failures = append(failures, eventFailure(sc, i, ev, want, records, cursor))
	}
	if x := sc.Expect.Final; x != nil {
		at := resPos(sc, x.Pos)
		if x.State != nil && *x.State != string(f.State) {
			failures = append(failures, fmt.Sprintf("%s: expect.final.state: got %q, want %q", at, f.State, *x.State))
		}
		if x.Attempt != nil && *x.Attempt != f.Attempt {
			failures = append(failures, fmt.Sprintf("%s: expect.final.attempt: got %d, want %d", at, f.Attempt, *x.Attempt))
		}
		if x.IsRetrying != nil && *x.IsRetrying != f.IsRetrying {
			failures = append(failures, fmt.Sprintf("%s: expect.final.isRetrying: got %t, want %t", at, f.IsRetrying, *x.IsRetrying))
		}
		if (x.HasUnresolved || x.UnresolvedPrompts != nil) && !slices.Equal(x.UnresolvedPrompts, f.UnresolvedPrompts) {
			failures = append(failures, fmt.Sprintf("%s: expect.final.unresolvedPrompts: got %s, want %s",
				at, intList(f.UnresolvedPrompts), intList(x.UnresolvedPrompts)))
		}
	}
	return failures
}

// findMatch returns the number (1-based) of the first record after
// record `after` and up to record `upTo` that matches want, or 0.
func findMatch(records []trace.Record, after, upTo int, want map[string]any) int {
	for n := after + 1; n <= upTo && n <= len(records); n++ {
		if trace.Match(&records[n-1], want) {
			return n
		}
	}
	return 0
}

// normalizeFields brings expected values to the types json.Unmarshal gives
// (float64 numbers, []any, map[string]any), so that values put in an
// scenario.ExpectEvent by code (ints, typed slices) compare like parsed ones.
func normalizeFields(fields map[string]any) map[string]any {
	out := make(map[string]any, len(fields))
	for k, v := range fields {
		out[k] = normalizeValue(v)
	}
	return out
}

func normalizeValue(v any) any {
	switch v.(type) {
	case nil, string, bool, float64:
		return v
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return v
	}
	return out
}

// eventFailure describes expected event i that matched no record after
// record cursor, with a hint: the record it matches out of order, or the
// nearest record of the same type and how it differs.
func eventFailure(sc *scenario.Scenario, i int, ev scenario.ExpectEvent, want map[string]any, records []trace.Record, cursor int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: expect.events[%d] %s: ", resPos(sc, ev.Pos), i, compactFields(ev.Keys, want))
	if cursor == 0 {
		fmt.Fprintf(&b, "no matching line in the trace (%d lines)", len(records))
	} else {
		fmt.Fprintf(&b, "no matching line after trace line %d (of %d)", cursor, len(records))
	}
	if n := findMatch(records, 0, cursor, want); n > 0 {
		fmt.Fprintf(&b, "; out of order: it matches trace line %d", n)
		return b.String()
	}
	name, ok := want["type"].(string)
	if !ok {
		return b.String()
	}
	typ, _ := trace.ParseType(name)
	// The nearest record of the same type: after the search start, or else
	// before it.
	nearest, label := 0, "nearest"
	for n := cursor + 1; n <= len(records) && nearest == 0; n++ {
		if records[n-1].Type == typ {
			nearest = n
		}
	}
	for n := cursor; n >= 1 && nearest == 0; n-- {
		if records[n-1].Type == typ {
			nearest, label = n, "nearest earlier"
		}
	}
	if nearest == 0 {
		return b.String()
	}
	r := &records[nearest-1]
	var diffs []string
	for _, k := range orderedKeys(ev.Keys, want) {
		if trace.Match(r, map[string]any{k: want[k]}) {
			continue
		}
		if v, present := trace.FieldJSON(r, k); present {
			diffs = append(diffs, k+"="+v)
		} else {
			diffs = append(diffs, k+" missing")
		}
	}
	fmt.Fprintf(&b, "; %s: trace line %d has %s", label, nearest, strings.Join(diffs, ", "))
	return b.String()
}

// orderedKeys returns the keys of fields in the order of keys, then any
// others sorted (Keys may be empty for events built in code).
func orderedKeys(keys []string, fields map[string]any) []string {
	out := make([]string, 0, len(fields))
	seen := make(map[string]bool, len(fields))
	for _, k := range keys {
		if _, ok := fields[k]; ok && !seen[k] {
			out = append(out, k)
			seen[k] = true
		}
	}
	var rest []string
	for k := range fields {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

// compactFields renders fields as one-line JSON in file order:
// {"type":"auto_retry_end","attempt":3}.
func compactFields(keys []string, fields map[string]any) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range orderedKeys(keys, fields) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(jsonw.Compact(k))
		b.WriteByte(':')
		b.WriteString(jsonw.Compact(fields[k]))
	}
	b.WriteByte('}')
	return b.String()
}

func intList(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return "[" + strings.Join(parts, ",") + "]"
}
