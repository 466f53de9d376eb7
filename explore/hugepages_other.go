//go:build !linux

package explore

// adviseHugePages does nothing here (see hugepages_linux.go).
func adviseHugePages[T any](s []T) error { return nil }
