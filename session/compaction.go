package session

import (
	"fmt"
	"strings"
)

// CompactionModes are the one spelling of the overflow compaction's
// setting in flags and files: "on" (it runs and succeeds), "off" (it does
// not run) and "fail" (it runs and fails). A file may also give it as
// {enabled, succeed}.
var CompactionModes = []string{"on", "off", "fail"}

// ParseCompaction reads a compaction mode (CompactionModes): whether
// compaction runs (Config.CompactionEnabled) and whether it succeeds
// (Config.CompactionSucceeds).
func ParseCompaction(mode string) (enabled, succeed bool, err error) {
	switch mode {
	case "on":
		return true, true, nil
	case "off":
		return false, false, nil
	case "fail":
		return true, false, nil
	}
	return false, false, fmt.Errorf("unknown value %q (allowed: %s)", mode, strings.Join(CompactionModes, ", "))
}
