package workload

import "github.com/pagesim/pagesim/engine/internal/deepcopy"

// init registers the task programs and shrinkers of this package, so that
// a run written as bytes (deepcopy.Encode: the page's engine worker sends
// its runs so) can be read back. engine/scenario's tests encode every
// scenario's run and fail on a type missing here.
func init() {
	deepcopy.Register[*Allocator]()
	deepcopy.Register[*Faulter]()
	deepcopy.Register[*SlabChurner]()
	deepcopy.Register[*SlabCycler]()
	deepcopy.Register[*ObjectCycler]()
	deepcopy.Register[*CacheWriter]()
	deepcopy.Register[*CacheReader]()
	deepcopy.Register[*RandomReader]()
	deepcopy.Register[*Pinner]()
	deepcopy.Register[*btrfsTransaction]()
	deepcopy.Register[*BuildWorker]()
	deepcopy.Register[*PSIMonitor]()
	deepcopy.Register[*QemuVfio]()
	deepcopy.Register[*pgSession]()
	deepcopy.Register[*bgWriter]()
	deepcopy.Register[*PageCacheWriter]()
	deepcopy.Register[*kmemCache]()
	deepcopy.Register[*superCache]()
	deepcopy.Register[*objectCyclerShrinker]()
}
