package scenario

import (
	"unsafe"

	"github.com/pagesim/pagesim/engine/mm"
)

// unsafePageStates views a slice of page states as its bytes.
func unsafePageStates(s *[]mm.PageState) unsafe.Pointer {
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(*s))), len(*s))
	return unsafe.Pointer(&b)
}
