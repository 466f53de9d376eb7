package fleet

import (
	"strconv"
	"strings"
)

// SeedsText writes sorted seeds (a Group's) as ranges, as the table and
// the charts name them: "1-20", "1,3,5-7".
func SeedsText(seeds []int64) string {
	var parts []string
	for i := 0; i < len(seeds); {
		j := i
		for j+1 < len(seeds) && seeds[j+1] == seeds[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, strconv.FormatInt(seeds[i], 10)+"-"+strconv.FormatInt(seeds[j], 10))
		} else {
			parts = append(parts, strconv.FormatInt(seeds[i], 10))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}
