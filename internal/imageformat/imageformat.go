// Package imageformat names the image formats the fleet's charts are drawn
// in (SPEC.md §15.7), by file extension. It imports no chart library, so
// that retrysim checks --plot's file before a run without linking one.
package imageformat

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Formats are the image formats, by file extension.
var Formats = []string{"png", "svg"}

// Of is the format of an image file by its extension (".png" or ".svg",
// any case); another extension is an error saying which are allowed.
func Of(path string) (string, error) {
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	if !slices.Contains(Formats, ext) {
		return "", fmt.Errorf("%q: unknown image format %q (allowed: a file ending in .png or .svg)", path, filepath.Ext(path))
	}
	return ext, nil
}
