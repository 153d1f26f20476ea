package catalog

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/engine/scenario"
	"github.com/pagesim/pagesim/engine/sim"
	"github.com/pagesim/pagesim/ui/app"
)

func TestTheCatalogListsThePlaceholderThenEveryScenario(t *testing.T) {
	cat, err := New()
	require.NoError(t, err)
	infos := cat.Infos()
	require.Len(t, infos, 1+len(scenario.All()))
	assert.Equal(t, "churn", infos[0].Name)
	for i, s := range scenario.All() {
		in := infos[1+i]
		assert.Equal(t, s.ID, in.Name)
		require.Len(t, in.Params, len(s.Params))
		for j, p := range s.Params {
			assert.Equal(t, p.Name, in.Params[j].Name)
			assert.Equal(t, p.Default, in.Params[j].Default)
		}
		assert.Equal(t, s.DefaultVariants(), cat.Defaults(s.ID).Variants)
	}
}

// The page refuses a value with the words `pagesim run --set` uses.
func TestParametersAreCheckedByTheScenariosOwnParser(t *testing.T) {
	spec, err := scenario.Get("thp-thisnode")
	require.NoError(t, err)
	_, in, ok := mustCatalog(t).Lookup("thp-thisnode")
	require.True(t, ok)
	for _, p := range in.Params {
		if p.Name != "scale" {
			continue
		}
		perr := p.Check("2")
		require.Error(t, perr)
		_, rerr := spec.Parse([]string{"scale=2"})
		assert.Equal(t, rerr.Error(), perr.Error())
		assert.NoError(t, p.Check("0.05"))
	}
	st, err := mustCatalog(t).Decode("v1/thp-thisnode?scale=7")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "scale")
	assert.Equal(t, "churn", st.Scenario, "the defaults")
}

func mustCatalog(t *testing.T) *app.Catalog {
	t.Helper()
	cat, err := New()
	require.NoError(t, err)
	return cat
}

// TestThePageRunsAScenarioToTheSameNumbersAsPagesimRun runs thp-thisnode
// at a small scale through the page's controller, in lockstep and in
// small slices, and compares every variant's metrics with RunAll (what
// `pagesim run --format json` prints).
func TestThePageRunsAScenarioToTheSameNumbersAsPagesimRun(t *testing.T) {
	const link = "v1/thp-thisnode?seed=5&scale=0.03&guest_gb=30,42"
	c := app.NewController(mustCatalog(t), app.Options{Link: link, MaxChunk: 64})
	require.Empty(t, c.Message())
	require.Empty(t, c.RunError())
	c.Play()
	require.NoError(t, c.SetSpeed(1000))
	for i := 0; !c.Ended(); i++ {
		c.Tick(50*time.Millisecond, 2*time.Millisecond)
		require.Less(t, i, 100000, "the runs never ended (now %v)", c.Now())
	}
	assert.False(t, c.Playing())

	spec, err := scenario.Get("thp-thisnode")
	require.NoError(t, err)
	res, err := spec.RunAll(scenario.Options{Seed: 5, Runs: 1, Settings: []string{"scale=0.03", "guest_gb=30,42"}})
	require.NoError(t, err)
	require.Len(t, c.Runs(), len(res.Variants))
	for i, vr := range res.Variants {
		run := c.Runs()[i]
		require.Equal(t, vr.Name, run.Variant)
		got := map[string]string{}
		for _, m := range run.Run.Results() {
			got[m.Name] = m.Text
		}
		require.Len(t, got, len(vr.Mean), vr.Name)
		for name, want := range vr.Mean {
			assert.Equal(t, strconv.FormatFloat(want, 'f', -1, 64), got[name], "%s %s", vr.Name, name)
		}
	}
	// The variants finished at different times; the table has them all.
	s := c.Snapshot(1)
	assert.Contains(t, s.TableText, "elapsed_s_42")
	for _, l := range s.Live {
		assert.Equal(t, "done", l.Status)
	}
	assert.True(t, strings.HasPrefix(s.Link, "v1/thp-thisnode?seed=5&x=1000&t="), s.Link)
	assert.Contains(t, s.Link, "&guest_gb=30,42&scale=0.03")
	end := c.Now()
	assert.Equal(t, end-end%sim.Millisecond+sim.Millisecond, c.Target(), "the link's time is the end, to the next millisecond")
}

// Knobs are checked and applied as `pagesim run --set` does.
func TestKnobsGoThroughTheScenariosParser(t *testing.T) {
	cat := mustCatalog(t)
	_, in, _ := cat.Lookup("thp-thisnode")
	require.NotNil(t, in.CheckKnob)
	name, err := in.CheckKnob("/proc/sys/vm/defrag_mode", "1")
	require.NoError(t, err)
	assert.Equal(t, "vm.defrag_mode", name)
	_, err = in.CheckKnob("scale", "0.1")
	assert.ErrorContains(t, err, "is a parameter")
	_, err = in.CheckKnob("vm.nosuch", "1")
	assert.Error(t, err)

	c := app.NewController(cat, app.Options{Link: "v1/thp-thisnode?scale=0.03&v=upstream&vm.watermark_scale_factor=123"})
	require.Empty(t, c.Message())
	require.Empty(t, c.RunError())
	v, err := c.Runs()[0].Run.Machine().GetSysctl("vm.watermark_scale_factor")
	require.NoError(t, err)
	assert.Equal(t, "123", v)
}
