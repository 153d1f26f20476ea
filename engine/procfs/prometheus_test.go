package procfs_test

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	prom "github.com/prometheus/procfs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/procfs"
)

// What pagesim prints is readable by the tools people already point at
// /proc: prometheus/procfs (node_exporter's parser) reads our buddyinfo and
// zoneinfo and finds the machine's values.
func TestPrometheusProcfsReadsOurFiles(t *testing.T) {
	for _, c := range machineCases() {
		t.Run(c.name, func(t *testing.T) {
			m := c.build(t)
			dir := t.TempDir()
			for _, f := range []struct {
				name  string
				write func(*testing.T) string
			}{
				{"buddyinfo", func(t *testing.T) string { return render(t, procfs.Buddyinfo, m) }},
				{"zoneinfo", func(t *testing.T) string { return render(t, procfs.Zoneinfo, m) }},
			} {
				require.NoError(t, os.WriteFile(filepath.Join(dir, f.name), []byte(f.write(t)), 0o644))
			}
			fs, err := prom.NewFS(dir)
			require.NoError(t, err)

			buddy, err := fs.BuddyInfo()
			require.NoError(t, err)
			populated := populatedZones(m)
			require.Len(t, buddy, len(populated))
			for i, z := range populated {
				assert.Equal(t, strconv.Itoa(z.Node.ID), buddy[i].Node)
				assert.Equal(t, z.Name(), buddy[i].Zone)
				require.Len(t, buddy[i].Sizes, mm.NR_PAGE_ORDERS)
				for o := mm.Order(0); o < mm.NR_PAGE_ORDERS; o++ {
					assert.Equal(t, float64(z.NrFree(o)), buddy[i].Sizes[o])
				}
			}

			zones, err := fs.Zoneinfo()
			require.NoError(t, err)
			require.Len(t, zones, len(m.Zones()))
			for i, z := range m.Zones() {
				got := zones[i]
				assert.Equal(t, strconv.Itoa(z.Node.ID), got.Node)
				assert.Equal(t, z.Name(), got.Zone)
				wantI64 := func(name string, want uint64, got *int64) {
					if assert.NotNil(t, got, "%s of %s", name, z.Name()) {
						assert.Equal(t, int64(want), *got, "%s of %s", name, z.Name())
					}
				}
				wantI64("min", z.WmarkPages(mm.WMARK_MIN), got.Min)
				wantI64("low", z.WmarkPages(mm.WMARK_LOW), got.Low)
				wantI64("high", z.WmarkPages(mm.WMARK_HIGH), got.High)
				wantI64("spanned", z.SpannedPages, got.Spanned)
				wantI64("present", z.PresentPages, got.Present)
				wantI64("managed", z.ManagedPages, got.Managed)
				require.Len(t, got.Protection, len(z.LowmemReserve))
				for j, p := range got.Protection {
					require.NotNil(t, p)
					assert.Equal(t, z.LowmemReserve[j], *p)
				}
				if z.Populated() {
					wantI64("nr_free_pages", z.FreePages(), got.NrFreePages)
					wantI64("numa_hit", z.NumaEvents[mm.NUMA_HIT], got.NumaHit)
				}
			}
		})
	}
}
