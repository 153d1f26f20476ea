package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCompressDirWritesDecodableCopiesOnlyWhenStale(t *testing.T) {
	dir := t.TempDir()
	js := bytes.Repeat([]byte("console.log('pagesim');\n"), 200)
	write := func(name string, data []byte, age time.Duration) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, data, 0o644))
		at := time.Now().Add(-age)
		require.NoError(t, os.Chtimes(p, at, at))
		return p
	}
	src := write("boot.js", js, time.Hour)
	write("notes.txt", []byte("not served compressed"), time.Hour)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
	write(filepath.Join("sub", "style.css"), []byte("body { margin: 0 }"), time.Hour)

	require.NoError(t, compressDir(dir, 5))
	gz, err := os.Open(src + ".gz")
	require.NoError(t, err)
	zr, err := gzip.NewReader(gz)
	require.NoError(t, err)
	got, err := io.ReadAll(zr)
	require.NoError(t, err)
	gz.Close()
	assert.Equal(t, js, got, "the .gz copy decodes to the file")
	br, err := os.ReadFile(src + ".br")
	require.NoError(t, err)
	got, err = io.ReadAll(brotli.NewReader(bytes.NewReader(br)))
	require.NoError(t, err)
	assert.Equal(t, js, got, "the .br copy decodes to the file")
	assert.Less(t, len(br), len(js)/5)
	assert.FileExists(t, filepath.Join(dir, "sub", "style.css.br"), "subfolders too")
	assert.NoFileExists(t, filepath.Join(dir, "notes.txt.gz"), "only the types the site serves")

	// Up to date: nothing is rewritten.
	old := time.Now().Add(-time.Minute)
	require.NoError(t, os.Chtimes(src+".br", old, old))
	require.NoError(t, compressDir(dir, 5))
	fi, err := os.Stat(src + ".br")
	require.NoError(t, err)
	assert.WithinDuration(t, old, fi.ModTime(), time.Second, "a copy newer than its file is kept")

	// The file changes: its copies are redone and read as newer.
	js2 := append(js, []byte("// more\n")...)
	write("boot.js", js2, 0)
	require.NoError(t, compressDir(dir, 5))
	br, err = os.ReadFile(src + ".br")
	require.NoError(t, err)
	got, err = io.ReadAll(brotli.NewReader(bytes.NewReader(br)))
	require.NoError(t, err)
	assert.Equal(t, js2, got)
	si, _ := os.Stat(src)
	fi, _ = os.Stat(src + ".gz")
	assert.True(t, fi.ModTime().After(si.ModTime()))
}

func TestWriteIfChangedKeepsAnUnchangedFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.js")
	require.NoError(t, WriteIfChanged(p, []byte("x")))
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(p, old, old))
	require.NoError(t, WriteIfChanged(p, []byte("x")))
	fi, err := os.Stat(p)
	require.NoError(t, err)
	assert.WithinDuration(t, old, fi.ModTime(), time.Second)
	require.NoError(t, WriteIfChanged(p, []byte("y")))
	b, _ := os.ReadFile(p)
	assert.Equal(t, "y", string(b))
	assert.NoFileExists(t, p+".tmp")
}

func TestHelperScript(t *testing.T) {
	mk := func(src string) string {
		dir := t.TempDir()
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "domrender"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "domrender", "renderer-js-script.go"), []byte(src), 0o644))
		return dir
	}
	s, err := HelperScript(mk("package domrender\n\nconst other = 1\n\nconst jsHelperScript = \"(function(){})();\\n\"\n"))
	require.NoError(t, err)
	assert.Equal(t, "(function(){})();\n", s)

	_, err = HelperScript(mk("package domrender\n\nconst jsHelperScript = 42\n"))
	assert.ErrorContains(t, err, "not a string literal")
	_, err = HelperScript(mk("package domrender\n\nconst other = \"x\"\n"))
	assert.ErrorContains(t, err, "no jsHelperScript constant")
	_, err = HelperScript(t.TempDir())
	assert.Error(t, err)

	// The module in go.mod has it, and it is the renderer's JavaScript.
	dir, err := vuguDir()
	require.NoError(t, err)
	s, err = HelperScript(dir)
	require.NoError(t, err)
	assert.Contains(t, s, "function")
}

func TestPutCopiesFilesUnderTheirNamesAndKeepsUnchangedOnes(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	a := filepath.Join(src, "a.js")
	b := filepath.Join(src, "b.css")
	require.NoError(t, os.WriteFile(a, []byte("a"), 0o644))
	require.NoError(t, os.WriteFile(b, []byte("b"), 0o644))
	require.NoError(t, put(dst, []string{a, b}))
	got, err := os.ReadFile(filepath.Join(dst, "a.js"))
	require.NoError(t, err)
	assert.Equal(t, "a", string(got))

	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(filepath.Join(dst, "a.js"), old, old))
	require.NoError(t, os.WriteFile(b, []byte("b2"), 0o644))
	require.NoError(t, put(dst, []string{a, b}))
	fi, err := os.Stat(filepath.Join(dst, "a.js"))
	require.NoError(t, err)
	assert.WithinDuration(t, old, fi.ModTime(), time.Second, "an unchanged file keeps its time")
	got, err = os.ReadFile(filepath.Join(dst, "b.css"))
	require.NoError(t, err)
	assert.Equal(t, "b2", string(got), "a changed file is rewritten")
	assert.Error(t, put(dst, []string{filepath.Join(src, "missing")}))
}

func TestABusyAddressIsReportedBeforeAnythingIsBuilt(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	err = checkAddr(ln.Addr().String())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is another server using it? Pick another address, for example make run ADDR=localhost:8081")
	assert.NoError(t, checkAddr("127.0.0.1:0"))
}
