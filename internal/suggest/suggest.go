// Package suggest finds the names closest to a mistyped one, for the
// "did you mean" of the CLI's commands and flags and of the keys of
// scenario files, fleet files and retry settings.
package suggest

import (
	"slices"
	"strings"
)

// DidYouMean returns "; did you mean X?" (X and the other closest
// candidates, each prefixed with dash), or "" when no candidate is close
// to typed: within an edit distance (Distance) of 1 for names of up to
// 4 characters, 2 for longer ones, or, when none is, a candidate that
// typed (of 2 characters or more) begins.
func DidYouMean(typed string, candidates []string, dash string) string {
	limit := 1
	if len([]rune(typed)) > 4 {
		limit = 2
	}
	var best []string
	bestDist := limit + 1
	for _, c := range candidates {
		switch d := Distance(strings.ToLower(typed), strings.ToLower(c)); {
		case d < bestDist:
			best, bestDist = []string{c}, d
		case d == bestDist:
			best = append(best, c)
		}
	}
	if best == nil && len(typed) >= 2 {
		for _, c := range candidates {
			if strings.HasPrefix(c, typed) {
				best = append(best, c)
			}
		}
	}
	if best == nil {
		return ""
	}
	slices.Sort(best)
	best = slices.Compact(best)
	for i := range best {
		best[i] = dash + best[i]
	}
	list := best[len(best)-1]
	if len(best) > 1 {
		list = strings.Join(best[:len(best)-1], ", ") + " or " + list
	}
	return "; did you mean " + list + "?"
}

// Distance is the optimal string alignment distance between a and b
// (in runes): the Levenshtein distance (insertions, deletions,
// substitutions) where swapping two adjacent characters also counts as
// one edit, so that "rnu" is 1 from "run".
func Distance(a, b string) int {
	s, t := []rune(a), []rune(b)
	// d[i][j] is the distance between s[:i] and t[:j]; three rows kept.
	prev2 := make([]int, len(t)+1)
	prev := make([]int, len(t)+1)
	cur := make([]int, len(t)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(s); i++ {
		cur[0] = i
		for j := 1; j <= len(t); j++ {
			cost := 1
			if s[i-1] == t[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && s[i-1] == t[j-2] && s[i-2] == t[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(t)]
}

// maxKeyLen is the longest mistyped key Key looks for a suggestion for: a
// longer one is no typo of a short name.
const maxKeyLen = 64

// Key is DidYouMean for a file's or a settings object's unknown key
// (candidates quoted as they are, no prefix), "" for a key longer than
// maxKeyLen bytes.
func Key(typed string, allowed []string) string {
	if len(typed) > maxKeyLen {
		return ""
	}
	return DidYouMean(typed, allowed, "")
}
