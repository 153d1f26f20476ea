package scenario

import (
	"bytes"
	"fmt"
	"hash/crc64"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/engine/internal/deepcopy"
	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/procfs"
	"github.com/pagesim/pagesim/engine/sim"
)

// checkpointCases are every scenario at a small scale, with a time t2
// inside the run (each run ends after it).
var checkpointCases = map[string]struct {
	set []string
	t2  sim.Time
}{
	"thp-thisnode":       {[]string{"scale=0.01", "guest_gb=30,42"}, 150 * sim.Millisecond},
	"nofrag-watermark":   {[]string{"scale=0.05"}, 5 * sim.Second},
	"noretry-compaction": {[]string{"scale=0.005"}, 300 * sim.Millisecond},
	"promoted-order":     {[]string{"scale=0.01"}, 500 * sim.Millisecond},
	"playground":         {[]string{"mem=32", "duration=1"}, 800 * sim.Millisecond},
}

// observed is what a reader of the run sees at its time: the /proc files,
// PSI, the trace ring's latest lines, every page's state, the phase, the
// results and metrics so far.
func observed(t *testing.T, r *Run) string {
	t.Helper()
	var b bytes.Buffer
	m := r.cur.M
	require.NoError(t, procfs.Buddyinfo(&b, m))
	require.NoError(t, procfs.Pagetypeinfo(&b, m))
	require.NoError(t, procfs.Zoneinfo(&b, m))
	require.NoError(t, procfs.Vmstat(&b, m))
	v := r.View()
	fmt.Fprintln(&b, v.Now(), v.Phase(), v.Status(), v.PSIAvg(false), v.PSIAvg(true), v.TraceWritten())
	fmt.Fprintln(&b, strings.Join(v.TraceLines(64), "\n"))
	st, ok := v.LastStall()
	fmt.Fprintln(&b, st, ok, r.Results())
	met := r.Metrics()
	keys := make([]string, 0, len(met))
	for k := range met {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintln(&b, k, met[k])
	}
	states := v.PageStates(0, make([]mm.PageState, v.MaxPFN()))
	fmt.Fprintln(&b, crc64.Checksum(*(*[]byte)(unsafePageStates(&states)), crc64.MakeTable(crc64.ECMA)))
	return b.String()
}

func digest(t *testing.T, r *Run) uint64 {
	t.Helper()
	d, err := r.Digest()
	require.NoError(t, err)
	return d
}

// advanceChecked advances r to until in eight slices, checking the
// machine's invariants after each.
func advanceChecked(t *testing.T, r *Run, until sim.Time) {
	t.Helper()
	from := r.Now()
	for i := 1; i <= 8; i++ {
		r.Advance(from+(until-from)*sim.Time(i)/8, 1<<62)
		require.NoError(t, r.cur.M.CheckInvariants())
	}
}

// For random t1 < t2 in every scenario, the run at t2 reached directly
// and a copy of the run taken at t1 and advanced to t2 are in the same
// state: everything a reader sees, and everything the run holds (the
// digest of the whole graph: counters, free lists, page states, the
// trace ring, PSI, the event queue, the RNG streams, every task's
// program); so are a packed copy once unpacked and the run written as
// bytes with planes (the timeline's checkpoints), kept in a store beside
// an earlier checkpoint of the run, and read back. Advancing the copy
// leaves the original as it was at t1.
func TestARunRestoredFromACheckpointReachesTheSameStateAsTheRunItself(t *testing.T) {
	rnd := sim.NewRand(16)
	for _, s := range registry {
		tc, ok := checkpointCases[s.ID]
		require.True(t, ok, "%s has no checkpoint case: add one", s.ID)
		t.Run(s.ID, func(t *testing.T) {
			st, err := s.Parse(tc.set)
			require.NoError(t, err)
			variant := s.DefaultVariants()[len(s.DefaultVariants())-1]
			forward, err := s.NewRun(variant, st, 3, 0)
			require.NoError(t, err)
			forward.Advance(tc.t2, 1<<62)
			require.False(t, forward.Done(), "t2 is inside the run")
			want, wantDigest := observed(t, forward), digest(t, forward)

			t1 := sim.Time(rnd.Uint64() % uint64(tc.t2))
			orig, err := s.NewRun(variant, st, 3, 0)
			require.NoError(t, err)
			store := deepcopy.NewStore()
			orig.Advance(t1/2, 1<<62)
			early, _, err := deepcopy.EncodePlanes(orig)
			require.NoError(t, err)
			store.Put(early)
			orig.Advance(t1, 1<<62)
			atT1, origDigest := observed(t, orig), digest(t, orig)
			cp, n, err := orig.Clone()
			require.NoError(t, err)
			assert.Positive(t, n)
			assert.Equal(t, origDigest, digest(t, cp), "a copy digests as its original")

			packed, err := deepcopy.Pack(orig, packMinBytes)
			require.NoError(t, err)
			unpacked, _, err := packed.Unpack()
			require.NoError(t, err)
			assert.Equal(t, origDigest, digest(t, unpacked), "a packed copy unpacks to its original's state")

			enc, _, err := deepcopy.EncodePlanes(orig)
			require.NoError(t, err)
			stored := store.Put(enc)
			back, err := store.Get(stored)
			require.NoError(t, err)
			decoded, err := DecodeRun(back)
			require.NoError(t, err)
			assert.Equal(t, origDigest, digest(t, decoded), "a stored checkpoint reads back to its original's state")

			advanceChecked(t, cp, tc.t2)
			assert.Equal(t, want, observed(t, cp), "t1 = %v", t1)
			assert.Equal(t, wantDigest, digest(t, cp), "t1 = %v", t1)
			unpacked.Advance(tc.t2, 1<<62)
			assert.Equal(t, wantDigest, digest(t, unpacked), "t1 = %v, packed", t1)
			advanceChecked(t, decoded, tc.t2)
			assert.Equal(t, want, observed(t, decoded), "t1 = %v, stored", t1)
			assert.Equal(t, wantDigest, digest(t, decoded), "t1 = %v, stored", t1)

			assert.Equal(t, origDigest, digest(t, orig), "advancing the copy left the original alone")
			assert.Equal(t, atT1, observed(t, orig))
			orig.Advance(tc.t2, 1<<62)
			assert.Equal(t, wantDigest, digest(t, orig), "the original goes on as if never copied")
		})
	}
}

// A checkpoint leaves out only the fields tagged deepcopy:"-" (a test's
// hook, a recorder's), and no type a run holds keeps a func that is not
// tagged: a closure would hold state a copy cannot reach. A new field of
// either kind fails here until it is listed, with the code that sets it
// again on a copy if the copy needs it.
func TestTheFieldsACheckpointLeavesOutAreListed(t *testing.T) {
	leftOut := map[string]bool{}
	funcs := map[string]bool{}
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type)
	walk = func(ty reflect.Type) {
		if seen[ty] {
			return
		}
		seen[ty] = true
		switch ty.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array:
			walk(ty.Elem())
		case reflect.Map:
			walk(ty.Key())
			walk(ty.Elem())
		case reflect.Struct:
			if ty == reflect.TypeFor[Spec]() {
				return // shared, immutable
			}
			for i := range ty.NumField() {
				f := ty.Field(i)
				name := ty.String() + "." + f.Name
				if f.Tag.Get("deepcopy") == "-" {
					leftOut[name] = true
					continue
				}
				if f.Type.Kind() == reflect.Func {
					funcs[name] = true
				}
				walk(f.Type)
			}
		}
	}
	walk(reflect.TypeFor[Run]())
	// The dynamic types behind the interfaces a run holds, as the
	// scenarios' runs have them.
	for _, s := range registry {
		tc := checkpointCases[s.ID]
		st, err := s.Parse(tc.set)
		require.NoError(t, err)
		r, err := s.NewRun(s.DefaultVariants()[0], st, 1, 0)
		require.NoError(t, err)
		for _, tk := range r.cur.M.World.Tasks {
			if tk.Program != nil {
				walk(reflect.TypeOf(tk.Program))
			}
		}
		walk(reflect.TypeOf(r.phases))
		for _, x := range []any{r.cur.Done, r.cur.Status, r.cur.End} {
			if x != nil {
				walk(reflect.TypeOf(x))
			}
		}
	}
	assert.Equal(t, map[string]bool{
		"sim.World.OnStep":      true, // a test's hook; the engine's is Observer
		"sim.World.AfterEvent":  true, // RunAll's invariant check sets it again
		"sim.World.BeforeEvent": true, // a recorder's; recorded runs are not copied
	}, leftOut)
	assert.Empty(t, funcs, "a func field in a run's state: make it an interface with a value behind it")
}
