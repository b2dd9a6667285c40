//go:build !amd64 && !arm64

package prefetch

import "unsafe"

// Available reports whether Line issues a prefetch instruction.
const Available = false

// Line does nothing on this architecture.
func Line(p unsafe.Pointer) {}
