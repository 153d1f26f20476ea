package scenario

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseTakesParametersSysctlsAndTHPKnobsByKernelPath(t *testing.T) {
	s, err := Get("thp-thisnode")
	require.NoError(t, err)
	tests := []struct {
		set     string
		name    string
		want    string
		wantErr string
	}{
		{set: "guest_gb=30, 34", name: "guest_gb", want: "30,34"},
		{set: "vm.defrag_mode=1", name: "vm.defrag_mode", want: "1"},
		{set: "/proc/sys/vm/watermark_scale_factor=100", name: "vm.watermark_scale_factor", want: "100"},
		{set: "transparent_hugepage.defrag=madvise", name: "transparent_hugepage.defrag", want: "madvise"},
		{set: "/sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled=always", name: "transparent_hugepage.hugepages-64kB.enabled", want: "always"},
		{set: "guest_gb=-4", wantErr: "guest_gb"},
		{set: "nodes=x", wantErr: "nodes"},
		{set: "vm.no_such_knob=1", wantErr: "unknown parameter or knob"},
		{set: "transparent_hugepage.defrag=sometimes", wantErr: "defrag"},
		{set: "guest_gb", wantErr: "NAME=VALUE"},
	}
	for _, tc := range tests {
		t.Run(tc.set, func(t *testing.T) {
			st, err := s.Parse([]string{tc.set})
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				assert.NotContains(t, err.Error(), "\n", "one-line error")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, EffectiveParams(s, st)[tc.name])
		})
	}
}

func TestAPastedBlobIsQuotedClippedInTheOneLineError(t *testing.T) {
	s, err := Get("thp-thisnode")
	require.NoError(t, err)
	blob := strings.Repeat("1", 100000)
	for _, set := range []string{
		"scale=" + blob, "vfio=" + blob, "guest_gb=" + blob, "mempolicy=" + blob, blob + "=1",
		"vm.defrag_mode=" + blob, "transparent_hugepage.defrag=" + blob, blob,
	} {
		t.Run(set[:20], func(t *testing.T) {
			_, err := s.Parse([]string{set})
			require.Error(t, err)
			assert.Less(t, len(err.Error()), 200, "the value is clipped: %.120s", err)
			assert.Contains(t, err.Error(), strings.Repeat("1", 40)+"...")
		})
	}
}

// FuzzParse: any --set string is either refused with a one-line error or
// accepted; an accepted setting's effective value parses again to itself,
// so a report's params reproduce the run.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"guest_gb=30,34,38,42", "scale=0.05", "nodes=2", "vfio=false", "mempolicy=interleave",
		"vm.defrag_mode=1", "vm.min_free_kbytes=67584", "transparent_hugepage.enabled=never",
		"transparent_hugepage.hugepages-2048kB.enabled=inherit", "scale=1e309", "guest_gb=,", "=", "cpus=0x10",
		"swap_gb=NaN", "vm.watermark_boost_factor=-1", "guest_gb=30,,34",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, set string) {
		for _, s := range All() {
			st, err := s.Parse([]string{set})
			if err != nil {
				if strings.Contains(err.Error(), "\n") {
					t.Fatalf("%s: multi-line error for %q: %q", s.ID, set, err)
				}
				continue
			}
			eff := EffectiveParams(s, st)
			var again []string
			for name, value := range eff {
				again = append(again, name+"="+value)
			}
			st2, err := s.Parse(again)
			if err != nil {
				t.Fatalf("%s: %q accepted, but its effective params %q are refused: %v", s.ID, set, again, err)
			}
			assert.Equal(t, eff, EffectiveParams(s, st2), "%s: %q", s.ID, set)
		}
	})
}

// Every scenario boots through newMachine, so that its runs vary with the
// seed through the engine's causes (boot layout, scheduler timing).
func TestEveryScenarioBootsWithTheSeedsCauses(t *testing.T) {
	for _, s := range registry { // the unlisted playground too
		t.Run(s.ID, func(t *testing.T) {
			st, err := s.Parse(nil)
			require.NoError(t, err)
			phases, err := s.Start(Config{Variant: s.DefaultVariants()[0], Params: st.Values, Knobs: s.Knobs, Seed: 1})
			require.NoError(t, err)
			ph, err := phases.Boot(0)
			require.NoError(t, err)
			assert.NotNil(t, ph.M.World.Sched, "the scheduler timing model is on")
		})
	}
}

func TestSpreadShowsASmallStandardDeviationInsteadOfZero(t *testing.T) {
	for _, tc := range []struct {
		name string
		sd   float64
		want string
	}{
		{"no spread prints in the cell's format", 0, "0.00"},
		{"a spread the format shows is printed as it is", 0.25, "0.25"},
		{"a spread the format would round to zero gets two significant digits", 0.0018, "0.0018"},
		{"a spread just under the format's last decimal gets two significant digits too", 0.004, "0.0040"},
		{"a spread below 1e-6 prints in the cell's format", 1e-9, "0.00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, spread("%.2f", tc.sd))
		})
	}
}
