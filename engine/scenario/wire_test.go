package scenario

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/engine/sim"
)

// A run encoded at a random time t1 inside it (what an engine worker sends
// the page) decodes to the same state (the digest of the whole graph and
// what a reader sees), and the decoded run advanced to t2 reaches the
// state the run itself reaches there. The run that was encoded is left as
// it was.
func TestARunEncodedAndDecodedGoesOnAsTheRunItself(t *testing.T) {
	rnd := sim.NewRand(17)
	for _, s := range registry {
		tc, ok := checkpointCases[s.ID]
		require.True(t, ok, "%s has no checkpoint case: add one", s.ID)
		t.Run(s.ID, func(t *testing.T) {
			st, err := s.Parse(tc.set)
			require.NoError(t, err)
			variant := s.DefaultVariants()[0]
			fwd, err := s.NewRun(variant, st, 5, 0)
			require.NoError(t, err)
			fwd.Advance(tc.t2, 1<<62)
			wantT2, wantT2Digest := observed(t, fwd), digest(t, fwd)
			r, err := s.NewRun(variant, st, 5, 0)
			require.NoError(t, err)
			for _, at := range []sim.Time{0, sim.Time(rnd.Uint64() % uint64(tc.t2))} {
				r.Advance(at, 1<<62)
				want, wantDigest := observed(t, r), digest(t, r)
				b, err := r.Encode()
				require.NoError(t, err)
				got, err := DecodeRun(b)
				require.NoError(t, err)
				assert.Equal(t, wantDigest, digest(t, got), "at %v", at)
				assert.Equal(t, want, observed(t, got), "at %v", at)
				assert.Equal(t, wantDigest, digest(t, r), "encoding left the run alone")
				advanceChecked(t, got, tc.t2)
				assert.Equal(t, wantT2, observed(t, got), "from %v", at)
				assert.Equal(t, wantT2Digest, digest(t, got), "from %v", at)
			}
			// Every variant's run holds only types Decode can find.
			for _, v := range s.Variants {
				if v.Name == variant {
					continue
				}
				r, err := s.NewRun(v.Name, st, 5, 0)
				require.NoError(t, err)
				r.Advance(tc.t2, 1<<62)
				_, err = r.Encode()
				require.NoError(t, err, v.Name)
			}
		})
	}
}
