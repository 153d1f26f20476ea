package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/internal/webserve"
)

// syncBuffer is a bytes.Buffer safe for the server goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// startServe runs `pagesim serve ARGS` until the test ends and returns the
// address it printed.
func startServe(t *testing.T, args ...string) (base string, stderr *syncBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	stderr = &syncBuffer{}
	code := make(chan int, 1)
	go func() { code <- serve(ctx, args, pw, stderr); pw.Close() }()
	line, err := bufio.NewReader(pr).ReadString('\n')
	require.NoError(t, err, "stderr: %s", stderr.String())
	go io.Copy(io.Discard, pr)
	t.Cleanup(func() {
		cancel()
		select {
		case c := <-code:
			assert.Equal(t, exitOK, c)
		case <-time.After(10 * time.Second):
			t.Error("serve did not stop")
		}
	})
	require.True(t, strings.HasPrefix(line, "pagesim: serving the browser app on http://"), line)
	base = strings.Fields(strings.TrimPrefix(line, "pagesim: serving the browser app on "))[0]
	return strings.TrimSuffix(base, "/"), stderr
}

func TestServePrintsItsAddressAndServesAFolder(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "index.html"), []byte("<!doctype html>hello"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "pagesim.wasm"), []byte("\x00asm"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "pagesim.wasm.br"), []byte("BR"), 0o644))
	base, stderr := startServe(t, "--addr", "127.0.0.1:0", "--dir", dir)
	res, err := http.Get(base + "/")
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	assert.Equal(t, "<!doctype html>hello", string(body))
	assert.Equal(t, webserve.CSP, res.Header.Get("Content-Security-Policy"))

	req, _ := http.NewRequest("GET", base+"/pagesim.wasm", nil)
	req.Header.Set("Accept-Encoding", "br")
	res, err = http.DefaultTransport.RoundTrip(req)
	require.NoError(t, err)
	body, _ = io.ReadAll(res.Body)
	res.Body.Close()
	assert.Equal(t, "BR", string(body))
	assert.Equal(t, "br", res.Header.Get("Content-Encoding"))
	assert.Equal(t, "application/wasm", res.Header.Get("Content-Type"))
	assert.Empty(t, stderr.String())
}

func TestServeWarnsAboutAnUnbuiltSite(t *testing.T) {
	base, stderr := startServe(t, "--addr", "127.0.0.1:0", "--dir", t.TempDir())
	assert.Contains(t, stderr.String(), "the site is not built")
	res, err := http.Get(base + "/")
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, res.StatusCode)
	assert.Equal(t, webserve.NotBuilt, string(body))
}

func TestTheEmbeddedSiteIsServedByDefault(t *testing.T) {
	base, _ := startServe(t, "--addr", "127.0.0.1:0")
	res, err := http.Get(base + "/placeholder.txt")
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode)
}

func TestTheAddressIsPrintedAsGivenWithTheBoundPort(t *testing.T) {
	bound := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	assert.Equal(t, "http://localhost:8080/", displayURL("localhost:8080", bound))
	assert.Equal(t, "http://localhost:8080/", displayURL(":8080", bound))
	assert.Equal(t, "http://127.0.0.1:8080/", displayURL("127.0.0.1:0", bound))
	assert.Equal(t, "http://[::1]:8080/", displayURL("[::1]:8080", bound))
}

func TestServeRefusesBadArguments(t *testing.T) {
	var out, errb bytes.Buffer
	assert.Equal(t, exitUsage, serve(context.Background(), []string{"--bogus"}, &out, &errb))
	assert.Equal(t, exitUsage, serve(context.Background(), []string{"extra"}, &out, &errb))
	errb.Reset()
	assert.Equal(t, exitInput, serve(context.Background(), []string{"--dir", "/nonexistent/pagesim"}, &out, &errb))
	assert.Contains(t, errb.String(), "is not a folder")
	errb.Reset()
	assert.Equal(t, exitInput, serve(context.Background(), []string{"--addr", "256.0.0.1:99999", "--dir", t.TempDir()}, &out, &errb))
	assert.NotEmpty(t, errb.String())
	code := runMain([]string{"help", "serve"}, &out, &errb)
	assert.Equal(t, exitOK, code)
	assert.Contains(t, out.String(), "Usage: pagesim serve")
}
