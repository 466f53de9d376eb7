package audit

import "math"

// Fit is how well a profile fits a wire log: its findings there, and how
// close the log's waits came to the profile's.
type Fit struct {
	Profile  string `json:"profile"`
	Findings int    `json:"findings"`
	// DistanceMs is how far, in all, the retries' waits fell outside the
	// profile's ranges (0: every wait within its range, slack aside).
	DistanceMs float64 `json:"distanceMs"`
	// SpreadMs is the total width of the ranges the waits were checked
	// against: of two profiles that fit alike, the narrower ranges say
	// more.
	SpreadMs float64 `json:"spreadMs"`
}

// fitTieMs is how close two distances or spreads are taken as equal.
const fitTieMs = 0.5

// bestFits names the profiles that fit best (Fit order kept).
func bestFits(fits []Fit) []string {
	if len(fits) == 0 {
		return nil
	}
	best := fits[0]
	for _, f := range fits[1:] {
		if fitBetter(f, best) {
			best = f
		}
	}
	var names []string
	for _, f := range fits {
		if !fitBetter(best, f) {
			names = append(names, f.Profile)
		}
	}
	return names
}

// fitBetter reports whether a fits strictly better than b.
func fitBetter(a, b Fit) bool {
	switch {
	case a.Findings != b.Findings:
		return a.Findings < b.Findings
	case math.Abs(a.DistanceMs-b.DistanceMs) > fitTieMs:
		return a.DistanceMs < b.DistanceMs
	case math.Abs(a.SpreadMs-b.SpreadMs) > fitTieMs:
		return a.SpreadMs < b.SpreadMs
	}
	return false
}
