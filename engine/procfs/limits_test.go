package procfs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/procfs"
)

// copyDump copies a fixture into a temporary folder and applies edits:
// file name -> a function of its text (an empty text removes the file).
func copyDump(t *testing.T, fixture string, edits map[string]func(string) string) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join("testdata", "fixtures", fixture)
	entries, err := os.ReadDir(src)
	require.NoError(t, err)
	for _, e := range entries {
		if e.IsDir() || e.Name() == "SOURCE.md" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		require.NoError(t, err)
		text := string(b)
		if f := edits[e.Name()]; f != nil {
			text = f(text)
			require.NotEqual(t, string(b), text, "the edit of %s changed nothing", e.Name())
			if text == "" {
				continue // the edit removes the file
			}
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, e.Name()), []byte(text), 0o644))
	}
	return dir
}

// replaceLine replaces the n-th line (1-based) of text.
func replaceLine(n int, with string) func(string) string {
	return func(text string) string {
		lines := strings.Split(text, "\n")
		lines[n-1] = with
		return strings.Join(lines, "\n")
	}
}

// budget is the limit the tests import with: far above any fixture (the
// largest is a few MiB to simulate), far below what the edits ask for.
const budget = 1 << 30

// importDir imports dir, failing the test if it takes more than ten
// seconds (a FIFO would block forever).
func importDir(t *testing.T, dir string) (*mm.Machine, []string, error) {
	t.Helper()
	type result struct {
		m   *mm.Machine
		w   []string
		err error
	}
	done := make(chan result, 1)
	go func() {
		m, w, err := procfs.Import(os.DirFS(dir), procfs.ImportOptions{MaxBytes: budget})
		done <- result{m, w, err}
	}()
	select {
	case r := <-done:
		return r.m, r.w, r.err
	case <-time.After(10 * time.Second):
		t.Fatal("the import did not return within 10 s")
		return nil, nil, nil
	}
}

func TestImportRefusesAnOverBudgetMachineNamingTheFileAndLine(t *testing.T) {
	cases := []struct {
		name    string
		fixture string
		edits   map[string]func(string) string
		want    string
	}{
		{"2000000 order-10 chunks in buddyinfo (32 GB before)", "jc-linux-proc", map[string]func(string) string{
			"buddyinfo": replaceLine(2, "Node 0, zone    DMA32    258    253    133    122     89     48      9      4      4      8 2000000"),
			"zoneinfo":  nil, "pagetypeinfo": nil,
		}, ""},
		{"1000000 order-10 chunks in pagetypeinfo", "bitloli-x86-6types", map[string]func(string) string{
			"pagetypeinfo": replaceLine(12, "Node    0, zone    DMA32, type      Movable    417    197     98     86     84     90     64     65     71     90 1000000"),
		}, `^pagetypeinfo:12: a machine of .* needs .* of memory to simulate, over the limit of 1 GiB$`},
		{"start_pfn 1000000000 in zoneinfo", "jc-linux-proc", map[string]func(string) string{
			"zoneinfo": replaceLine(157, "  start_pfn:           1000000000"),
		}, `^zoneinfo:117: a machine of .* and PFNs up to 1\d{9} needs .* of memory to simulate, over the limit of 1 GiB$`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyDump(t, tc.fixture, nil)
			for name, f := range tc.edits {
				if f == nil {
					require.NoError(t, os.Remove(filepath.Join(dir, name)))
					continue
				}
				b, err := os.ReadFile(filepath.Join(dir, name))
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(f(string(b))), 0o644))
			}
			m, _, err := importDir(t, dir)
			require.Error(t, err)
			assert.Nil(t, m)
			var be *mm.BudgetError
			require.ErrorAs(t, err, &be)
			want := tc.want
			if want == "" {
				want = `^buddyinfo:2: a machine of .* needs .* of memory to simulate, over the limit of 1 GiB$`
			}
			assert.Regexp(t, regexp.MustCompile(want), err.Error())
		})
	}
}

func TestImportRefusesNumbersWhoseSumsWouldWrap(t *testing.T) {
	cases := []struct {
		name  string
		edits map[string]func(string) string
		want  string
	}{
		{"spanned 2^64-1 in zoneinfo", map[string]func(string) string{
			"zoneinfo": func(s string) string { return strings.Replace(s, "spanned  4095", "spanned  18446744073709551615", 1) },
		}, "zoneinfo:1: node 0 zone DMA ends beyond 8 TiB"},
		{"an order-10 count of 2^64-1 in buddyinfo and pagetypeinfo", map[string]func(string) string{
			"buddyinfo":    replaceLine(3, "Node 0, zone   Normal   1218   1261   3275   1814    891    185      2      5      3      0 18446744073709551615"),
			"pagetypeinfo": replaceLine(16, "Node    0, zone   Normal, type      Movable      0      0      1      1      1      1      2     11     13      0 18446744073709551615"),
		}, "zoneinfo:117: node 0 zone Normal ends beyond 8 TiB"},
		{"3000000 order-10 chunks in pagetypeinfo alone need more than 8 TiB", map[string]func(string) string{
			"pagetypeinfo": replaceLine(16, "Node    0, zone   Normal, type      Movable      0      0      1      1      1      1      2     11     13      0 3000000"),
			"zoneinfo":     func(string) string { return "" }, "buddyinfo": func(string) string { return "" },
		}, "pagetypeinfo:16: node 0 zone Normal: its free chunks and pageblocks need more than 8 TiB"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyDump(t, "jc-linux-proc", tc.edits)
			m, _, err := importDir(t, dir)
			require.Error(t, err)
			assert.Nil(t, m)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestLoadReadsOnlyRegularFilesOfBoundedSize(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  string
	}{
		{"a device is refused", func(t *testing.T, dir string) {
			require.NoError(t, os.Remove(filepath.Join(dir, "vmstat")))
			require.NoError(t, os.Symlink("/dev/zero", filepath.Join(dir, "vmstat")))
		}, "vmstat: not a regular file (a device)"},
		{"a dangling symlink is reported, not taken as absent", func(t *testing.T, dir string) {
			require.NoError(t, os.Remove(filepath.Join(dir, "vmstat")))
			require.NoError(t, os.Symlink("no-such-file", filepath.Join(dir, "vmstat")))
		}, "vmstat: a symbolic link to a file that does not exist"},
		{"a 100 MB vmstat is refused before it is read", func(t *testing.T, dir string) {
			require.NoError(t, os.Truncate(filepath.Join(dir, "vmstat"), 100<<20))
		}, "vmstat: 104857600 bytes, more than a /proc file pagesim reads (16777216)"},
		{"a folder named zoneinfo is refused", func(t *testing.T, dir string) {
			require.NoError(t, os.Remove(filepath.Join(dir, "zoneinfo")))
			require.NoError(t, os.Mkdir(filepath.Join(dir, "zoneinfo"), 0o755))
		}, "zoneinfo: not a regular file (a folder)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyDump(t, "jc-linux-proc", nil)
			tc.setup(t, dir)
			m, _, err := importDir(t, dir)
			require.Error(t, err)
			assert.Nil(t, m)
			assert.Equal(t, tc.want, err.Error())
		})
	}
}

func TestLoadRefusesAFileThatGrowsPastTheLimitWhileRead(t *testing.T) {
	// A symlink to a regular file that is larger than it says cannot be
	// made portably; a file of exactly the limit plus a line can.
	dir := copyDump(t, "jc-linux-proc", nil)
	line := "nr_free_pages 1\n"
	big := strings.Repeat(line, procfs.MaxFileBytes/len(line)+1)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "vmstat"), []byte(big), 0o644))
	_, _, err := importDir(t, dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "vmstat: ")
	assert.Contains(t, err.Error(), "more than a /proc file pagesim reads")
}

func TestImportWarnsOrRefusesWhatTheKernelNeverPrints(t *testing.T) {
	t.Run("a buddyinfo line shorter than the others is refused", func(t *testing.T) {
		dir := copyDump(t, "jc-linux-proc", map[string]func(string) string{
			"buddyinfo": replaceLine(2, "Node 0, zone    DMA32    258    253"),
		})
		_, _, err := importDir(t, dir)
		require.Error(t, err)
		assert.Equal(t, "buddyinfo:2: 2 orders, line 1 has 11 (a truncated line?)", err.Error())
	})
	t.Run("a buddyinfo with two orders on every line warns that the rest are empty", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "buddyinfo"), []byte("Node 0, zone   Normal   1218   1261\n"), 0o644))
		m, warnings, err := importDir(t, dir)
		require.NoError(t, err)
		require.NotNil(t, m)
		assert.Contains(t, warnings, "buddyinfo:1: 2 orders (0-1); orders 2-10 are taken as empty")
	})
	t.Run("pages per block 7 beside page block order 9 is refused", func(t *testing.T) {
		dir := copyDump(t, "jc-linux-proc", map[string]func(string) string{
			"pagetypeinfo": replaceLine(2, "Pages per block:  7"),
		})
		_, _, err := importDir(t, dir)
		require.Error(t, err)
		assert.Equal(t, "pagetypeinfo:2: pages per block 7 does not match page block order 9 on line 1 (2^9 = 512)", err.Error())
	})
}

// FuzzImport runs the whole import path (Load, Dump.Spec, mm.Import) on
// four files and a sys_vm sysctl, with a 64 MiB budget: any input gives a
// machine that passes CheckInvariants (Import checks) or a one-line error;
// nothing panics, and nothing allocates in proportion to a number it read.
func FuzzImport(f *testing.F) {
	read := func(fixture, name string) string {
		b, _ := os.ReadFile(filepath.Join("testdata", "fixtures", fixture, name))
		return string(b)
	}
	for _, fx := range []string{"jc-linux-proc", "node-exporter", "pcp-meminfo-root-007"} {
		f.Add(read(fx, "buddyinfo"), read(fx, "pagetypeinfo"), read(fx, "zoneinfo"), read(fx, "vmstat"), "")
	}
	f.Add("Node 0, zone   Normal   1218   1261\n", "", "", "", "67584")
	f.Add("", read("bitloli-x86-6types", "pagetypeinfo"), "", "nr_free_pages 1\n", "1")
	f.Fuzz(func(t *testing.T, buddyinfo, pagetypeinfo, zoneinfo, vmstat, minFree string) {
		fsys := fstest.MapFS{}
		for name, text := range map[string]string{"buddyinfo": buddyinfo, "pagetypeinfo": pagetypeinfo, "zoneinfo": zoneinfo, "vmstat": vmstat, "sys_vm/min_free_kbytes": minFree} {
			if text != "" {
				fsys[name] = &fstest.MapFile{Data: []byte(text)}
			}
		}
		m, _, err := procfs.Import(fsys, procfs.ImportOptions{MaxBytes: 64 << 20})
		if err != nil {
			if m != nil {
				t.Fatalf("an error and a machine: %v", err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error: %q", err)
			}
			if strings.Contains(err.Error(), "pagesim bug") {
				t.Fatalf("an internal error: %v", err)
			}
			return
		}
		if err := m.CheckInvariants(); err != nil {
			t.Fatalf("the imported machine is inconsistent: %v", err)
		}
	})
}
