//go:build amd64 || arm64

package prefetch

import "unsafe"

// Available reports whether Line issues a prefetch instruction.
const Available = true

// Line hints that the cache line holding p will be read soon (amd64:
// PREFETCHT0, arm64: PRFM PLDL1KEEP). p may be any address, even nil or
// one past the end of an allocation: a prefetch never faults.
//
//go:noescape
func Line(p unsafe.Pointer)
