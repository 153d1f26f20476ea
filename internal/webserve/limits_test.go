package webserve

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// waitFor polls cond for up to ten seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

func heapInuse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

func TestFilesAreStreamedNotReadWholePerRequest(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "index.html"), []byte("page"), 0o644))
	big := filepath.Join(dir, "pagesim.wasm")
	require.NoError(t, os.WriteFile(big, nil, 0o644))
	require.NoError(t, os.Truncate(big, 16<<20))
	h := Handler(os.DirFS(dir))
	var inside atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inside.Add(1)
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	// The first request hashes the file for its ETag; then twenty
	// clients ask for the 16 MiB file and never read the answer.
	res, err := http.Get(srv.URL + "/pagesim.wasm")
	require.NoError(t, err)
	res.Body.Close()
	before := heapInuse()
	const clients = 20
	var conns []net.Conn
	for i := 0; i < clients; i++ {
		c, err := net.Dial("tcp", srv.Listener.Addr().String())
		require.NoError(t, err)
		defer c.Close()
		_, err = fmt.Fprintf(c, "GET /pagesim.wasm HTTP/1.1\r\nHost: x\r\n\r\n")
		require.NoError(t, err)
		conns = append(conns, c)
	}
	waitFor(t, "every request to reach the handler", func() bool { return inside.Load() == clients+1 })
	grown := int64(heapInuse()) - int64(before)
	// Reading the file whole per request held 20 x 16 MiB.
	assert.Less(t, grown, int64(16<<20), "the heap grew by %d bytes with %d stalled downloads", grown, clients)
}

func TestLimitListenerHoldsAtMostNConnections(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ln := LimitListener(inner, 2)
	defer ln.Close()
	var accepted atomic.Int32
	conns := make(chan net.Conn, 3)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			conns <- c
		}
	}()
	for i := 0; i < 3; i++ {
		c, err := net.Dial("tcp", inner.Addr().String())
		require.NoError(t, err)
		defer c.Close()
	}
	waitFor(t, "two connections", func() bool { return accepted.Load() == 2 })
	time.Sleep(100 * time.Millisecond)
	assert.Equal(t, int32(2), accepted.Load(), "a third connection while two are open")
	(<-conns).Close()
	waitFor(t, "the third connection once one closed", func() bool { return accepted.Load() == 3 })
}

func TestServerHasTimeoutsForClientsThatStall(t *testing.T) {
	srv := Server(site)
	assert.Equal(t, ReadHeaderTimeout, srv.ReadHeaderTimeout)
	assert.Equal(t, WriteTimeout, srv.WriteTimeout)
	assert.Equal(t, IdleTimeout, srv.IdleTimeout)
	assert.Positive(t, srv.ReadTimeout)
	assert.Equal(t, MaxHeaderBytes, srv.MaxHeaderBytes)
}
