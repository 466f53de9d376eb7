package tune

// Dominates reports whether a dominates b: every objective of a at most
// b's (all are minimized), and one strictly below.
func Dominates(a, b []float64) bool {
	better := false
	for i := range a {
		if a[i] > b[i] {
			return false
		}
		if a[i] < b[i] {
			better = true
		}
	}
	return better
}

// Front is the indices, in order, of the vectors no other vector
// dominates (equal vectors are all on it).
func Front(vs [][]float64) []int {
	var out []int
	for i := range vs {
		if !dominatedIn(vs[i], vs) {
			out = append(out, i)
		}
	}
	return out
}

// dominatedIn reports whether a vector of vs dominates v.
func dominatedIn(v []float64, vs [][]float64) bool {
	for _, o := range vs {
		if Dominates(o, v) {
			return true
		}
	}
	return false
}

// layers sorts vs into Pareto layers (non-dominated sorting): layer 0 is
// the front, layer k the front of what is left without layers 0 to k-1;
// it returns each vector's layer.
func layers(vs [][]float64) []int {
	layer := make([]int, len(vs))
	left := make([]int, len(vs))
	for i := range left {
		left[i] = i
	}
	for k := 0; len(left) > 0; k++ {
		var next, cur []int
		for _, i := range left {
			dom := false
			for _, j := range left {
				if Dominates(vs[j], vs[i]) {
					dom = true
					break
				}
			}
			if dom {
				next = append(next, i)
			} else {
				cur = append(cur, i)
			}
		}
		for _, i := range cur {
			layer[i] = k
		}
		left = next
	}
	return layer
}

// worst is the per-objective maximum over the seeds' vectors (the
// robust vector a candidate is ranked by), best the minimum.
func worst(seeds [][]float64) []float64 {
	return fold(seeds, func(a, b float64) float64 { return max(a, b) })
}

func best(seeds [][]float64) []float64 {
	return fold(seeds, func(a, b float64) float64 { return min(a, b) })
}

func fold(seeds [][]float64, f func(a, b float64) float64) []float64 {
	if len(seeds) == 0 {
		return nil
	}
	out := append([]float64(nil), seeds[0]...)
	for _, s := range seeds[1:] {
		for i := range out {
			out[i] = f(out[i], s[i])
		}
	}
	return out
}
