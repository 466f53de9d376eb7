package strictfile

import (
	"fmt"
	"strconv"
	"time"

	"gopkg.in/yaml.v3"
)

// Duration is a duration from 0 to max, a whole number of units, in the
// one spelling every file kind takes: a Go duration ("60s", "1.5s",
// "100ms", "3h") or an integer number of milliseconds (a "...Ms" key's
// spelling; 0 is zero in either).
func (r *Reader) Duration(n *yaml.Node, path string, unit, max time.Duration) time.Duration {
	whole := ""
	if unit > time.Nanosecond {
		whole = " (whole " + unitName(unit) + ")"
	}
	want := fmt.Sprintf(`a duration from 0s to %v%s: a Go duration such as "60s", "1.5s" or "100ms", or an integer number of milliseconds`, max, whole)
	if n.Kind == yaml.ScalarNode && IsString(n) {
		d, err := time.ParseDuration(n.Value)
		if err != nil {
			r.Fail(n, path, "expected %s, got %s", want, Describe(n))
		}
		if d < 0 || d > max || d%unit != 0 {
			r.Fail(n, path, "%s is out of range (allowed: %s)", Clip(strconv.Quote(n.Value)), want)
		}
		return d
	}
	return time.Duration(r.Integer(n, path, 0, int64(max/time.Millisecond), want)) * time.Millisecond
}

func unitName(unit time.Duration) string {
	if unit == time.Millisecond {
		return "milliseconds"
	}
	return "multiples of " + unit.String()
}
