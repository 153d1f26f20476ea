package mm

import "github.com/pagesim/pagesim/engine/internal/deepcopy"

// init registers the values of this package that a run holds behind an
// interface (kernel threads' programs, timers, the PSI observer), so that a run
// written as bytes (deepcopy.Encode: the page's engine worker sends its
// runs so) can be read back. engine/scenario's tests encode every
// scenario's run and fail on a type missing here.
func init() {
	deepcopy.Register[*kswapdProgram]()
	deepcopy.Register[*kcompactdProgram]()
	deepcopy.Register[*vmstatProgram]()
	deepcopy.Register[*blkRetireTimer]()
	deepcopy.Register[*daemonAskTimer]()
	deepcopy.Register[*psiObserver]()
}
