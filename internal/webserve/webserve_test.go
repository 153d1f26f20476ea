package webserve

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var site = fstest.MapFS{
	"index.html":      {Data: []byte("<!doctype html>page")},
	"index.html.gz":   {Data: []byte("GZ-page")},
	"index.html.br":   {Data: []byte("BR-page")},
	"pagesim.wasm":    {Data: []byte("\x00asm-raw")},
	"pagesim.wasm.gz": {Data: []byte("GZ-wasm")},
	"style.css":       {Data: []byte("body{}")},
	"boot.js":         {Data: []byte("'use strict'")},
	"placeholder.txt": {Data: []byte("x")},
	"sub/deep.json":   {Data: []byte("{}")},
}

func get(t *testing.T, h http.Handler, method, target string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	res := rec.Result()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res, string(b)
}

func TestEveryFileGetsItsContentType(t *testing.T) {
	h := Handler(site)
	for target, want := range map[string]string{
		"/": "text/html; charset=utf-8", "/index.html": "text/html; charset=utf-8",
		"/pagesim.wasm": "application/wasm", "/style.css": "text/css; charset=utf-8",
		"/boot.js": "text/javascript; charset=utf-8", "/sub/deep.json": "application/json",
	} {
		res, _ := get(t, h, "GET", target, nil)
		assert.Equal(t, http.StatusOK, res.StatusCode, target)
		assert.Equal(t, want, res.Header.Get("Content-Type"), target)
		assert.Equal(t, "nosniff", res.Header.Get("X-Content-Type-Options"))
	}
}

func TestThePrecompressedCopyIsServedWhenAccepted(t *testing.T) {
	h := Handler(site)
	cases := []struct{ accept, wantBody, wantEnc string }{
		{"", "<!doctype html>page", ""},
		{"gzip", "GZ-page", "gzip"},
		{"gzip, deflate, br, zstd", "BR-page", "br"},
		{"br;q=0, gzip", "GZ-page", "gzip"},
		{"*", "BR-page", "br"},
		{"identity", "<!doctype html>page", ""},
		{"BR", "BR-page", "br"}, // codings are case-insensitive
	}
	for _, c := range cases {
		res, body := get(t, h, "GET", "/", map[string]string{"Accept-Encoding": c.accept})
		assert.Equal(t, c.wantBody, body, c.accept)
		assert.Equal(t, c.wantEnc, res.Header.Get("Content-Encoding"), c.accept)
		assert.Equal(t, "Accept-Encoding", res.Header.Get("Vary"))
		assert.Equal(t, "text/html; charset=utf-8", res.Header.Get("Content-Type"))
	}
	// The wasm has only a .gz copy: a brotli client gets gzip.
	res, body := get(t, h, "GET", "/pagesim.wasm", map[string]string{"Accept-Encoding": "br, gzip"})
	assert.Equal(t, "GZ-wasm", body)
	assert.Equal(t, "gzip", res.Header.Get("Content-Encoding"))
	assert.Equal(t, "application/wasm", res.Header.Get("Content-Type"))
}

func TestThePageCarriesItsSecurityPolicy(t *testing.T) {
	res, _ := get(t, Handler(site), "GET", "/", nil)
	assert.Equal(t, CSP, res.Header.Get("Content-Security-Policy"))
	assert.Contains(t, CSP, "script-src 'self' 'wasm-unsafe-eval';")
	assert.NotContains(t, CSP, "frame-ancestors", "the page may be embedded in an iframe")
	assert.Empty(t, res.Header.Get("X-Frame-Options"))
	res, _ = get(t, Handler(site), "GET", "/boot.js", nil)
	assert.Empty(t, res.Header.Get("Content-Security-Policy"))
}

func TestETagsAnswerNotModified(t *testing.T) {
	h := Handler(site)
	res, _ := get(t, h, "GET", "/style.css", nil)
	tag := res.Header.Get("ETag")
	require.NotEmpty(t, tag)
	res, body := get(t, h, "GET", "/style.css", map[string]string{"If-None-Match": tag})
	assert.Equal(t, http.StatusNotModified, res.StatusCode)
	assert.Empty(t, body)
	res, _ = get(t, h, "GET", "/style.css", map[string]string{"Accept-Encoding": "gzip"})
	assert.Equal(t, tag, res.Header.Get("ETag"), "no .gz copy: the same file")
}

func TestHeadAndOtherMethods(t *testing.T) {
	h := Handler(site)
	res, body := get(t, h, "HEAD", "/pagesim.wasm", nil)
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Empty(t, body)
	assert.Equal(t, "8", res.Header.Get("Content-Length"))
	res, _ = get(t, h, "POST", "/", nil)
	assert.Equal(t, http.StatusMethodNotAllowed, res.StatusCode)
	assert.Equal(t, "GET, HEAD", res.Header.Get("Allow"))
}

func TestMissingFilesAndEscapesAreNotFound(t *testing.T) {
	h := Handler(site)
	for _, target := range []string{"/nope.js", "/../../etc/passwd", "/sub/", "/%2e%2e/x"} {
		res, _ := get(t, h, "GET", target, nil)
		assert.Equal(t, http.StatusNotFound, res.StatusCode, target)
	}
}

func TestAnUnbuiltSiteSaysSo(t *testing.T) {
	h := Handler(fstest.MapFS{"placeholder.txt": {Data: []byte("x")}})
	res, body := get(t, h, "GET", "/", nil)
	assert.Equal(t, http.StatusServiceUnavailable, res.StatusCode)
	assert.Equal(t, NotBuilt, body)
	assert.False(t, Built(fstest.MapFS{}))
	assert.True(t, Built(site))
}
