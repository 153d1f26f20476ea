// Command sitetool does the steps of build.sh that need more than a
// shell: preparing the Ebiten the wasm binary is built with (ebiten.go),
// writing Vugu's DOM helper script as a file, copying files into the site
// only when their bytes differ, and precompressing the site. It needs
// nothing but Go, so a fresh machine can build the site.
//
//	go run ./internal/sitetool ebiten-patch DIR
//	go run ./internal/sitetool vugu-script OUT.js
//	go run ./internal/sitetool put DIR FILE...
//	go run ./internal/sitetool compress DIR
//	go run ./internal/sitetool check-addr HOST:PORT
//
// put copies each FILE into DIR under its own name through WriteIfChanged,
// so an unchanged file keeps its time and its compressed copies.
//
// vugu-script writes the exact JavaScript that Vugu's renderer would pass
// to eval() (the jsHelperScript constant of the vugu module in go.mod).
// The page's Content-Security-Policy forbids eval, so index.html loads the
// script as a file instead (see jsbridge.Bridge.WithoutEval).
//
// check-addr fails, saying so, when HOST:PORT cannot be listened on (the
// port is busy, or the host is not this machine's): `make run` asks before
// it builds anything.
//
// compress writes NAME.gz (gzip, best) and NAME.br (brotli) next to every
// compressible file of DIR and its subfolders, skipping files whose
// compressed copies are already newer. PAGESIM_BROTLI_QUALITY (0-11,
// default 9) trades build time for size: 11 saves about 13% on the wasm
// binary and takes ten times longer.
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/andybalholm/brotli"
)

func main() {
	if len(os.Args) < 3 || (os.Args[1] != "put" && len(os.Args) != 3) {
		fmt.Fprintln(os.Stderr, "usage: sitetool vugu-script OUT.js | sitetool put DIR FILE... | sitetool compress DIR | sitetool ebiten-patch DIR | sitetool check-addr HOST:PORT")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "put":
		err = put(os.Args[2], os.Args[3:])
	case "vugu-script":
		err = writeVuguScript(os.Args[2])
	case "ebiten-patch":
		err = ebitenPatch(os.Args[2])
	case "check-addr":
		err = checkAddr(os.Args[2])
	case "compress":
		q := 9
		if s := os.Getenv("PAGESIM_BROTLI_QUALITY"); s != "" {
			q, err = strconv.Atoi(s)
			if err != nil || q < 0 || q > 11 {
				err = fmt.Errorf("PAGESIM_BROTLI_QUALITY must be 0-11, got %q", s)
				break
			}
		}
		err = compressDir(os.Args[2], q)
	default:
		err = fmt.Errorf("unknown step %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "sitetool:", err)
		os.Exit(1)
	}
}

// checkAddr reports whether addr can be listened on, by listening on it
// and closing at once.
func checkAddr(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("cannot serve on %s (%v): is another server using it? Pick another address, for example make run ADDR=localhost:8081", addr, err)
	}
	return ln.Close()
}

// vuguDir asks the go command where the vugu module of this build lives.
func vuguDir() (string, error) {
	m, err := moduleOf("github.com/vugu/vugu")
	return m.Dir, err
}

// module is what `go list -m -json` says about a module of the build.
type module struct{ Path, Version, Dir string }

// moduleOf asks the go command where a module of the build lives. go list
// names the folder only once the module is in the module cache, so on a
// fresh machine it is downloaded first (go mod download says where).
func moduleOf(path string) (module, error) {
	var m module
	out, err := exec.Command("go", "list", "-m", "-json", path).Output()
	if err != nil {
		return m, fmt.Errorf("go list -m %s: %v", path, err)
	}
	if err := json.Unmarshal(out, &m); err != nil {
		return m, fmt.Errorf("go list -m %s: %v", path, err)
	}
	if m.Dir != "" {
		return m, nil
	}
	out, err = exec.Command("go", "mod", "download", "-json", path+"@"+m.Version).Output()
	if err != nil {
		return m, fmt.Errorf("go mod download %s@%s: %v", path, m.Version, err)
	}
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		return m, fmt.Errorf("go mod download gave no directory for %s", path)
	}
	return m, nil
}

// HelperScript returns the value of domrender's jsHelperScript constant
// from the Go source in dir.
func HelperScript(dir string) (string, error) {
	path := filepath.Join(dir, "domrender", "renderer-js-script.go")
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		return "", err
	}
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if n.Name != "jsHelperScript" || i >= len(vs.Values) {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return "", fmt.Errorf("%s: jsHelperScript is not a string literal", path)
				}
				return strconv.Unquote(lit.Value)
			}
		}
	}
	return "", fmt.Errorf("%s has no jsHelperScript constant", path)
}

func writeVuguScript(out string) error {
	dir, err := vuguDir()
	if err != nil {
		return err
	}
	s, err := HelperScript(dir)
	if err != nil {
		return err
	}
	return WriteIfChanged(out, []byte("// Vugu's DOM helpers (github.com/vugu/vugu/domrender jsHelperScript), loaded as a file because the page's CSP forbids eval.\n"+s+"\n"))
}

// WriteIfChanged writes data to path through a temporary file and a
// rename, unless the file already holds exactly data (so its time stays
// and the compressed copies are not redone).
func WriteIfChanged(path string, data []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// put copies each file into dir under its base name, through
// WriteIfChanged.
func put(dir string, files []string) error {
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		if err := WriteIfChanged(filepath.Join(dir, filepath.Base(f)), data); err != nil {
			return err
		}
	}
	return nil
}

var compressible = map[string]bool{".html": true, ".css": true, ".js": true, ".wasm": true, ".json": true, ".svg": true}

func compressDir(dir string, quality int) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !compressible[filepath.Ext(path)] {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		for _, enc := range []struct {
			ext string
			fn  func([]byte) ([]byte, error)
		}{
			{".gz", gzipBytes},
			{".br", func(b []byte) ([]byte, error) { return brotliBytes(b, quality) }},
		} {
			dst := path + enc.ext
			if di, err := os.Stat(dst); err == nil && di.ModTime().After(info.ModTime()) {
				continue
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			out, err := enc.fn(src)
			if err != nil {
				return fmt.Errorf("%s: %v", dst, err)
			}
			if err := WriteIfChanged(dst, out); err != nil {
				return err
			}
			// A rewrite with the same bytes keeps the old time: touch it
			// so it reads as newer than the source.
			now := info.ModTime().Add(1)
			if di, err := os.Stat(dst); err == nil && !di.ModTime().After(info.ModTime()) {
				_ = os.Chtimes(dst, now, now)
			}
			fmt.Fprintf(os.Stderr, "sitetool: %-28s %9d -> %9d\n", strings.TrimPrefix(dst, dir+string(filepath.Separator)), len(src), len(out))
		}
		return nil
	})
}

func gzipBytes(b []byte) ([]byte, error) {
	var out bytes.Buffer
	w, err := gzip.NewWriterLevel(&out, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(b); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func brotliBytes(b []byte, quality int) ([]byte, error) {
	var out bytes.Buffer
	w := brotli.NewWriterOptions(&out, brotli.WriterOptions{Quality: quality, LGWin: 24})
	if _, err := w.Write(b); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
