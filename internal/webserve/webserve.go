// Package webserve serves the static site build.sh writes: the right
// Content-Type for every file (application/wasm included), the
// precompressed .br or .gz copy when the client accepts it, ETags, and the
// page's security headers. `pagesim serve` and the browser tests use it; a
// static host that does none of this still works, only slower.
package webserve

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"net"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"
)

// CSP is the Content-Security-Policy the page declares in its meta tag,
// sent as a header too. It has no frame-ancestors: the page may be framed
// by any site (the embed mode, &embed, is for iframes in slides and blog
// posts), because it holds no user data and has no action with a side
// effect that a framing page could trick a click into.
const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data:; worker-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'"

var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".wasm": "application/wasm",
	".json": "application/json",
	".txt":  "text/plain; charset=utf-8",
	".svg":  "image/svg+xml",
	".png":  "image/png",
}

// NotBuilt is the body served at / when the site has no index.html.
const NotBuilt = "pagesim: the site is not built. Run ./build.sh (or make run), then start pagesim serve again.\n"

// Handler serves the files of site.
func Handler(site fs.FS) http.Handler {
	return &handler{site: site}
}

type handler struct {
	site  fs.FS
	etags sync.Map // file name, size and time -> ETag
}

// Built reports whether site holds a built page (index.html).
func Built(site fs.FS) bool {
	_, err := fs.Stat(site, "index.html")
	return err == nil
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
	if name == "" {
		name = "index.html"
	}
	if !fs.ValidPath(name) {
		http.NotFound(w, r)
		return
	}
	hdr := w.Header()
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "no-referrer")
	if name == "index.html" && !Built(h.site) {
		hdr.Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, NotBuilt)
		return
	}
	ctype, ok := contentTypes[path.Ext(name)]
	if !ok {
		ctype = "application/octet-stream"
	}
	if strings.HasSuffix(name, ".html") {
		hdr.Set("Content-Security-Policy", CSP)
	}
	// Pick the stored variant: brotli, then gzip, then the file itself.
	served, encoding := name, ""
	hdr.Set("Vary", "Accept-Encoding")
	for _, enc := range []struct{ token, ext string }{{"br", ".br"}, {"gzip", ".gz"}} {
		if accepts(r.Header.Get("Accept-Encoding"), enc.token) {
			if _, err := fs.Stat(h.site, name+enc.ext); err == nil {
				served, encoding = name+enc.ext, enc.token
				break
			}
		}
	}
	// The file is streamed from where it lies (the embedded FS or the
	// folder), never read whole: a request holds a copy buffer, not the
	// file, however many download the wasm binary at once.
	f, err := h.site.Open(served)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	rs, seekable := f.(io.ReadSeeker)
	if err != nil || !fi.Mode().IsRegular() || !seekable {
		http.NotFound(w, r)
		return
	}
	tag, err := h.etag(served, fi, rs)
	if err != nil {
		http.Error(w, "cannot read "+name, http.StatusInternalServerError)
		return
	}
	hdr.Set("Content-Type", ctype)
	if encoding != "" {
		hdr.Set("Content-Encoding", encoding)
	}
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("ETag", tag)
	// ServeContent handles HEAD, If-None-Match and ranges; a zero time
	// sends no Last-Modified (embedded files have none).
	http.ServeContent(w, r, name, time.Time{}, rs)
}

// etag hashes the file's bytes, once per name, size and modification
// time (a --dir site can be rebuilt while it is served), reading f
// through and seeking it back to its start.
func (h *handler) etag(name string, fi fs.FileInfo, f io.ReadSeeker) (string, error) {
	key := name + "\x00" + strconv.FormatInt(fi.Size(), 10) + "\x00" + fi.ModTime().String()
	if v, ok := h.etags.Load(key); ok {
		return v.(string), nil
	}
	sum := sha256.New()
	if _, err := io.Copy(sum, f); err != nil {
		return "", err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	tag := `"` + hex.EncodeToString(sum.Sum(nil)[:12]) + `"`
	h.etags.Store(key, tag)
	return tag, nil
}

// accepts reports whether an Accept-Encoding header allows token with a
// non-zero quality (an explicit token, or "*").
func accepts(header, token string) bool {
	star := false
	for _, part := range strings.Split(header, ",") {
		fields := strings.Split(strings.TrimSpace(part), ";")
		name := strings.ToLower(strings.TrimSpace(fields[0]))
		q := 1.0
		for _, p := range fields[1:] {
			k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
			if strings.EqualFold(k, "q") {
				if f, err := strconv.ParseFloat(v, 64); err == nil {
					q = f
				}
			}
		}
		switch name {
		case token:
			return q > 0
		case "*":
			star = q > 0
		}
	}
	return star
}

// Limits of Server: what one client, or many, can hold.
const (
	// MaxConns bounds the connections served at once; more wait in the
	// listen queue. Each holds at most a request's headers and a copy
	// buffer (the files are streamed), so the server's memory stays
	// within a few MiB whatever the clients do.
	MaxConns = 64
	// ReadHeaderTimeout, ReadTimeout, WriteTimeout and IdleTimeout end a
	// connection whose client stops sending, stops reading (the write of
	// the wasm binary, some 10 MiB, takes well under a second on
	// localhost; a client that never reads is dropped after
	// WriteTimeout) or keeps it idle.
	ReadHeaderTimeout = 10 * time.Second
	ReadTimeout       = 30 * time.Second
	WriteTimeout      = 2 * time.Minute
	IdleTimeout       = time.Minute
	MaxHeaderBytes    = 64 << 10
)

// Server returns an http.Server for site with the limits above; serve it
// on LimitListener(ln, MaxConns).
func Server(site fs.FS) *http.Server {
	return &http.Server{
		Handler:           Handler(site),
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
	}
}

// LimitListener returns a listener that holds at most n connections open
// at once: Accept waits for one to close (netutil.LimitListener's shape).
func LimitListener(ln net.Listener, n int) net.Listener {
	return &limitListener{Listener: ln, sem: make(chan struct{}, n), done: make(chan struct{})}
}

type limitListener struct {
	net.Listener
	sem       chan struct{}
	closeOnce sync.Once
	done      chan struct{}
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
}

func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
