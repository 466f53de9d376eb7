package explore

import (
	"syscall"
	"unsafe"
)

// adviseHugePages asks Linux to back s's array with transparent huge
// pages (madvise MADV_HUGEPAGE; machines whose setting is "madvise" give
// them only when asked): the states and the visited set's table are
// hundreds of MB touched at random, for which 4 KiB pages cost a page
// fault each on first touch and a TLB miss on most lookups. Advice only:
// the error (the kernel refused it) changes nothing but the speed.
func adviseHugePages[T any](s []T) error {
	if cap(s) == 0 {
		return nil
	}
	const page = 4096 // madvise takes whole pages
	var zero T
	start := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	end := start + uintptr(cap(s))*unsafe.Sizeof(zero)
	lo, hi := (start+page-1)&^(page-1), end&^(page-1)
	if hi <= lo {
		return nil
	}
	return syscall.Madvise(unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(s)), lo-start)), hi-lo), syscall.MADV_HUGEPAGE)
}
