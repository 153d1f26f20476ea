package sim

import "math/bits"

// Rand is the simulation's one random number generator: xoshiro256** seeded
// through splitmix64. It is small, fast, and gives the same sequence on every
// platform (math/rand's global source is never used by the engine).
type Rand struct {
	s [4]uint64
}

// NewRand returns a generator seeded with seed.
func NewRand(seed uint64) *Rand {
	r := &Rand{}
	r.Seed(seed)
	return r
}

// Seed resets the generator.
func (r *Rand) Seed(seed uint64) {
	x := seed
	for i := range r.s {
		x += 0x9e3779b97f4a7c15
		z := x
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		r.s[i] = z ^ (z >> 31)
	}
}

// Uint64 returns 64 random bits.
func (r *Rand) Uint64() uint64 {
	s := &r.s
	result := bits.RotateLeft64(s[1]*5, 7) * 9
	t := s[1] << 17
	s[2] ^= s[0]
	s[3] ^= s[1]
	s[1] ^= s[2]
	s[0] ^= s[3]
	s[2] ^= t
	s[3] = bits.RotateLeft64(s[3], 45)
	return result
}

// Intn returns a uniform integer in [0, n). n must be > 0.
func (r *Rand) Intn(n int) int {
	if n <= 0 {
		panic("sim: Intn with n <= 0")
	}
	return int(r.Uint64n(uint64(n)))
}

// Uint64n returns a uniform integer in [0, n) without modulo bias.
func (r *Rand) Uint64n(n uint64) uint64 {
	if n&(n-1) == 0 {
		return r.Uint64() & (n - 1)
	}
	limit := ^uint64(0) - (^uint64(0)%n+1)%n
	for {
		v := r.Uint64()
		if v <= limit {
			return v % n
		}
	}
}

// Float64 returns a uniform float in [0, 1).
func (r *Rand) Float64() float64 {
	return float64(r.Uint64()>>11) / (1 << 53)
}

// Chance returns true with probability num/den.
func (r *Rand) Chance(num, den uint64) bool {
	return r.Uint64n(den) < num
}

// # Streams: one generator per cause
//
// Every cause of run-to-run variation draws from its own generator, a
// stream, whose seed is derived from the world's seed and the cause's name
// (StreamSeed). A stream's sequence therefore depends only on the seed and
// on the draws made for that cause: adding a draw for one cause, or a new
// cause, leaves every other cause's numbers where they were, so a change in
// one place of the model does not reshuffle everything else.
//
// Names are paths, cause first. The engine uses:
//
//	sched/jiffies          the tick's phase when the run starts (sched.go)
//	sched/task/NAME#N      one task's wakeup exit latencies and its fork
//	                       placement; N counts earlier tasks of the same
//	                       name, so adding a task of another name changes
//	                       nothing for this one
//	boot/kaslr             the kernel image's physical slot (engine/mm)
//	boot/deferred-init/NID the order node NID's deferred struct-page
//	                       init threads free their memory (engine/mm)
//	workload/NAME#N        one workload program's own choices (file sizes,
//	                       access order), N as for tasks
//	io/DEVICE              reserved for a block device's completion times
//	                       (engine/mm/blk_mq.go draws them from World.Rand,
//	                       which no other engine cause uses)
//
// A new cause takes a new name and never draws from another cause's
// stream. World.Rand is the seed's unnamed generator, kept for tests, the
// playground and the block device until it takes io/DEVICE; new engine
// code takes a stream.

// StreamSeed derives the seed of the stream called name from a world's
// seed: FNV-1a of the name, mixed with the seed by one splitmix64 step, so
// that nearby seeds and similar names give unrelated streams.
func StreamSeed(seed uint64, name string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(name); i++ {
		h ^= uint64(name[i])
		h *= 1099511628211
	}
	z := seed ^ h
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
