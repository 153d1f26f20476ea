package app

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/engine/procfs"
)

const jcDump = "../../engine/procfs/testdata/fixtures/jc-linux-proc"

// folderFiles reads a dump folder as a picked folder gives it: each file
// under the folder's name.
func folderFiles(t *testing.T, dir string) ([]string, [][]byte) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	var data [][]byte
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		names = append(names, filepath.Base(dir)+"/"+e.Name())
		data = append(data, b)
	}
	return names, data
}

func tarGz(t *testing.T, names []string, data [][]byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	tw := tar.NewWriter(zw)
	for i, n := range names {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: n, Mode: 0o444, Size: int64(len(data[i])), Typeflag: tar.TypeReg}))
		_, err := tw.Write(data[i])
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, zw.Close())
	return b.Bytes()
}

func TestAnImportedDumpShowsWhatPagesimProcImportPrintsAndScriptsBootIt(t *testing.T) {
	m, warnings, err := procfs.Import(os.DirFS(jcDump), procfs.ImportOptions{})
	require.NoError(t, err)
	var wantWarn, wantBuddy strings.Builder
	for _, w := range warnings {
		wantWarn.WriteString("pagesim proc: warning: " + w + "\n")
	}
	require.NoError(t, procfs.Buddyinfo(&wantBuddy, m))

	names, data := folderFiles(t, jcDump)
	for _, given := range []struct {
		how   string
		names []string
		data  [][]byte
	}{
		{"a folder", names, data},
		{"a .tar.gz of it", []string{"dump.tar.gz"}, [][]byte{tarGz(t, names, data)}},
	} {
		r := NewScriptRunner()
		fsys, err := DumpFromFiles(given.names, given.data)
		require.NoError(t, err, given.how)
		require.True(t, r.SetDump(fsys, given.how, nil))
		d := r.State().Dump
		require.NotNil(t, d)
		assert.Empty(t, d.Err)
		assert.Equal(t, wantWarn.String(), d.Warnings, given.how)
		assert.Equal(t, wantBuddy.String(), d.Buddyinfo, given.how)
		st := runScript(t, r, "import\nprint buddyinfo\n")
		assert.Empty(t, st.Err)
		assert.True(t, strings.HasSuffix(st.Output, wantBuddy.String()), "the script boots the dump: %s", st.Output)
	}
}

func TestADumpThePageCannotTakeIsRefusedWithTheReason(t *testing.T) {
	tests := []struct {
		name  string
		names []string
		sizes []int64
		want  string
	}{
		{"no files at all", nil, nil, "no files"},
		{"a file larger than a /proc file can be", []string{"zoneinfo"}, []int64{procfs.MaxFileBytes + 1}, "zoneinfo is 16777217 bytes"},
		{"more files than a dump has", make([]string, MaxDumpFiles+1), make([]int64, MaxDumpFiles+1), "more than a dump has"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.ErrorContains(t, CheckDumpSizes(tt.names, tt.sizes), tt.want)
		})
	}
	_, err := DumpFromFiles([]string{"../etc/passwd"}, [][]byte{[]byte("x")})
	assert.ErrorContains(t, err, "not a file name a dump holds")
	_, err = DumpFromFiles([]string{"d.tar.gz"}, [][]byte{[]byte("not gzip")})
	assert.ErrorContains(t, err, "not a tar archive")

	r := NewScriptRunner()
	assert.False(t, r.SetDump(nil, "x", assert.AnError))
	assert.Equal(t, assert.AnError.Error(), r.State().Dump.Err)
	fsys, err := DumpFromFiles([]string{"vmstat"}, [][]byte{[]byte("nr_free_pages 10\n")})
	require.NoError(t, err)
	assert.False(t, r.SetDump(fsys, "vmstat", nil), "vmstat alone describes no zone")
	assert.Contains(t, r.State().Dump.Err, "buddyinfo")
}

func TestAScriptLinkCarriesASmallDumpAndRefusesALargeOne(t *testing.T) {
	small := "../../engine/procfs/testdata/fixtures/myblackhole-x86-6types"
	r := NewScriptRunner()
	require.True(t, r.SetDump(os.DirFS(small), "small", nil))
	frag, err := r.Link(ImportStarter)
	require.NoError(t, err)
	assert.LessOrEqual(t, len(frag), MaxScriptLink)
	src, err := ParseScriptLink(frag)
	require.NoError(t, err)
	assert.Equal(t, ImportStarter, src)
	dump, err := ParseScriptLinkDump(frag)
	require.NoError(t, err)
	q := NewScriptRunner()
	require.True(t, q.SetDump(dump, "the link's", nil))
	assert.Equal(t, r.State().Dump.Buddyinfo, q.State().Dump.Buddyinfo)
	assert.Equal(t, r.State().Dump.Warnings, q.State().Dump.Warnings)

	none, err := ParseScriptLinkDump("v1/script?src=abc")
	assert.NoError(t, err)
	assert.Nil(t, none)

	require.True(t, r.SetDump(os.DirFS(jcDump), "large", nil))
	_, err = r.Link(ImportStarter)
	assert.ErrorIs(t, err, ErrDumpTooLong, "jc-linux-proc's zoneinfo does not fit")
	var b bytes.Buffer
	require.NoError(t, r.WriteDump(&b))
	back, err := DumpFromFiles([]string{"dump.tar.gz"}, [][]byte{b.Bytes()})
	require.NoError(t, err)
	require.True(t, q.SetDump(back, "the file", nil))
	assert.Equal(t, r.State().Dump.Buddyinfo, q.State().Dump.Buddyinfo, "dump.tar.gz imports as the files did")
}

func TestTheMapShowsAnImportedMachineBeforeAnyScriptRunsOnIt(t *testing.T) {
	small := "../../engine/procfs/testdata/fixtures/myblackhole-x86-6types"
	want, _, err := procfs.Import(os.DirFS(small), procfs.ImportOptions{})
	require.NoError(t, err)
	var wantBuddy strings.Builder
	require.NoError(t, procfs.Buddyinfo(&wantBuddy, want))

	r := NewScriptRunner()
	r.Driven = true
	assert.Zero(t, r.Live().Gen, "nothing to show before the import")
	require.True(t, r.SetDump(os.DirFS(small), "myblackhole", nil))
	v := r.Live()
	require.NotNil(t, v.M, "the import's machine is on the map at once")
	assert.NotZero(t, v.Gen)
	assert.True(t, v.Ended, "no clock runs on it")
	assert.Equal(t, "myblackhole", v.Imported)
	assert.Zero(t, v.Now)
	var got strings.Builder
	require.NoError(t, procfs.Buddyinfo(&got, v.M))
	assert.Equal(t, wantBuddy.String(), got.String(), "the map's machine is the one pagesim proc --import boots")

	r.Reset()
	back := r.Live()
	require.NotNil(t, back.M, "Reset shows the imported machine again")
	assert.Greater(t, back.Gen, v.Gen)
	assert.Equal(t, "myblackhole", back.Imported)

	c, _ := newTestController(t, "")
	c.SetScript(r)
	c.ShowScript(true)
	c.Tick(0, time.Millisecond)
	require.True(t, c.ScriptOn(), "the open Script mode's map shows the imported machine")
	m, now, _, machines := c.ScriptMachine()
	assert.Same(t, back.M, m)
	assert.Zero(t, now)
	assert.Equal(t, 1, machines)

	done := make(chan struct{})
	r.RunToEnd(ImportStarter, func() { close(done) })
	for ended := false; !ended; {
		c.Tick(0, 50*time.Millisecond)
		select {
		case <-done:
			ended = true
		case <-time.After(time.Millisecond):
		}
	}
	assert.Empty(t, r.State().Err)
	assert.Empty(t, r.Live().Imported, "a script's run replaces it on the map")
	assert.NotSame(t, back.M, r.Live().M)

	failed := NewScriptRunner()
	failed.Driven = true
	assert.False(t, failed.SetDump(nil, "x", assert.AnError))
	assert.Nil(t, failed.Live().M, "a failed import shows no machine")
}
