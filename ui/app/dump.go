package app

// dump.go turns the files a visitor gives the page ("Start from a
// machine": picked files, a picked folder, dropped files, a .tar or
// .tar.gz of them) into the folder procfs.Load reads.

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"testing/fstest"

	"github.com/pagesim/pagesim/engine/procfs"
)

// Limits of what the page takes as a dump, checked before a file is read
// (the browser says how large a file is) and while an archive unpacks.
const (
	// MaxDumpFiles bounds the files of a dump (procfs allows 1 024
	// under sys_vm/ and four more).
	MaxDumpFiles = procfs.MaxSysVMFiles + 16
	// MaxDumpBytes bounds a dump's files together, and an archive.
	MaxDumpBytes = 64 << 20
)

// CheckDumpSizes refuses, before anything is read, a dump of too many
// files or one whose files are too large (sizes as the browser reports
// them).
func CheckDumpSizes(names []string, sizes []int64) error {
	if len(names) == 0 {
		return errors.New("no files: give buddyinfo, pagetypeinfo, zoneinfo, vmstat (any of them, and sys_vm/), or a .tar or .tar.gz of them")
	}
	if len(names) > MaxDumpFiles {
		return fmt.Errorf("%d files, more than a dump has (at most %d)", len(names), MaxDumpFiles)
	}
	var total int64
	for i, n := range names {
		limit := int64(procfs.MaxFileBytes)
		if isArchive(n) {
			limit = MaxDumpBytes
		}
		if sizes[i] > limit {
			return fmt.Errorf("%s is %d bytes, more than the page reads (%d)", n, sizes[i], limit)
		}
		total += sizes[i]
	}
	if total > MaxDumpBytes {
		return fmt.Errorf("the files hold %d bytes together, more than the page reads (%d)", total, MaxDumpBytes)
	}
	return nil
}

func isArchive(name string) bool {
	n := strings.ToLower(name)
	return strings.HasSuffix(n, ".tar") || strings.HasSuffix(n, ".tar.gz") || strings.HasSuffix(n, ".tgz")
}

// DumpFromFiles builds the dump folder from files given by name (a picked
// folder's files carry its name first: dump/buddyinfo; sys_vm files are
// sys_vm/NAME) or from one .tar or .tar.gz of them. A leading folder all
// files share is dropped, so a folder and its archive read alike.
func DumpFromFiles(names []string, data [][]byte) (fs.FS, error) {
	if err := CheckDumpSizes(names, sizesOf(data)); err != nil {
		return nil, err
	}
	if len(names) == 1 && isArchive(names[0]) {
		var err error
		names, data, err = untar(names[0], data[0])
		if err != nil {
			return nil, err
		}
	}
	clean := make([]string, len(names))
	for i, n := range names {
		n = path.Clean(strings.TrimPrefix(strings.ReplaceAll(n, "\\", "/"), "/"))
		if n == "." || strings.HasPrefix(n, "../") || n == ".." {
			return nil, fmt.Errorf("%q is not a file name a dump holds", names[i])
		}
		clean[i] = n
	}
	clean = dropSharedFolder(clean)
	m := fstest.MapFS{}
	for i, n := range clean {
		if _, dup := m[n]; dup {
			return nil, fmt.Errorf("%s is given twice", n)
		}
		m[n] = &fstest.MapFile{Data: data[i], Mode: 0o444}
	}
	return m, nil
}

func sizesOf(data [][]byte) []int64 {
	s := make([]int64, len(data))
	for i, d := range data {
		s[i] = int64(len(d))
	}
	return s
}

// dropSharedFolder removes a first path element every name has, unless
// that element is sys_vm (a folder's own files, not its name).
func dropSharedFolder(names []string) []string {
	first, _, ok := strings.Cut(names[0], "/")
	if !ok || first == "sys_vm" {
		return names
	}
	for _, n := range names {
		if f, _, ok := strings.Cut(n, "/"); !ok || f != first {
			return names
		}
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n[len(first)+1:]
	}
	return out
}

// untar reads the regular files of a tar archive, gzipped or not, within
// the dump's limits.
func untar(name string, b []byte) ([]string, [][]byte, error) {
	var r io.Reader = bytes.NewReader(b)
	if len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %v", name, err)
		}
		r = zr
	}
	tr := tar.NewReader(io.LimitReader(r, MaxDumpBytes+1<<20))
	var names []string
	var data [][]byte
	var total int64
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: not a tar archive a dump is in: %v", name, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		if len(names) == MaxDumpFiles {
			return nil, nil, fmt.Errorf("%s holds more than %d files, more than a dump has", name, MaxDumpFiles)
		}
		if h.Size > procfs.MaxFileBytes {
			return nil, nil, fmt.Errorf("%s: %s is %d bytes, more than the page reads (%d)", name, h.Name, h.Size, procfs.MaxFileBytes)
		}
		if total += h.Size; total > MaxDumpBytes {
			return nil, nil, fmt.Errorf("%s unpacks to more than %d bytes", name, MaxDumpBytes)
		}
		d, err := io.ReadAll(tr)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %s: %v", name, h.Name, err)
		}
		names = append(names, h.Name)
		data = append(data, d)
	}
	if len(names) == 0 {
		return nil, nil, fmt.Errorf("%s holds no files", name)
	}
	return names, data, nil
}

// ImportStarter is the script the editor gets when a dump is imported.
const ImportStarter = "import\nprint buddyinfo\n"

// ImportFiles makes the visitor's files a dump (DumpFromFiles) and
// imports it (SetDump); err is why they could not be read.
func (r *ScriptRunner) ImportFiles(names []string, data [][]byte, err error) {
	label := fmt.Sprintf("%d files", len(names))
	switch {
	case len(names) == 1:
		label = names[0]
	case len(names) > 1 && strings.Contains(names[0], "/"):
		first, _, _ := strings.Cut(names[0], "/")
		label = fmt.Sprintf("folder %s (%d files)", first, len(names))
	}
	var fsys fs.FS
	if err == nil {
		fsys, err = DumpFromFiles(names, data)
	}
	r.SetDump(fsys, label, err)
}

// dumpLinkParam puts the machine in a script link: &dump= after the
// script, the dump's files as a tar archive, deflated, in unpadded
// base64url.
const dumpLinkParam = "&dump="

// ErrDumpTooLong is the error of a link whose script and dump together
// would be longer than MaxScriptLink.
var ErrDumpTooLong = fmt.Errorf("the script with its machine's /proc files is too long for a link (over %d characters once compressed): download the script and dump.tar.gz and share the files", MaxScriptLink)

// Link returns the fragment of src's script link, carrying the imported
// dump too when there is one.
func (r *ScriptRunner) Link(src string) (string, error) {
	frag, err := ScriptLink(src)
	if err != nil {
		return "", err
	}
	r.mu.Lock()
	dump := r.dump
	r.mu.Unlock()
	if dump == nil {
		return frag, nil
	}
	var t bytes.Buffer
	if err := writeDumpTar(&t, dump); err != nil {
		return "", err
	}
	enc, err := deflateBase64(t.Bytes())
	if err != nil {
		return "", err
	}
	frag += dumpLinkParam + enc
	if len(frag) > MaxScriptLink {
		return "", ErrDumpTooLong
	}
	return frag, nil
}

// HasDump reports whether a dump is imported.
func (r *ScriptRunner) HasDump() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.dump != nil
}

// WriteDump writes the imported dump as a .tar.gz, which "Start from a
// machine" and (unpacked) pagesim proc --import read.
func (r *ScriptRunner) WriteDump(w io.Writer) error {
	r.mu.Lock()
	dump := r.dump
	r.mu.Unlock()
	if dump == nil {
		return errors.New("no machine imported")
	}
	zw := gzip.NewWriter(w)
	if err := writeDumpTar(zw, dump); err != nil {
		return err
	}
	return zw.Close()
}

// writeDumpTar writes the dump's files, in name order, as a tar archive
// under dump/.
func writeDumpTar(w io.Writer, dump fs.FS) error {
	tw := tar.NewWriter(w)
	err := fs.WalkDir(dump, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(dump, p)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: "dump/" + p, Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err = tw.Write(b)
		return err
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

// ParseScriptLinkDump returns the dump a script link carries, or nil if it
// carries none.
func ParseScriptLinkDump(frag string) (fs.FS, error) {
	_, enc, ok := strings.Cut(frag, dumpLinkParam)
	if !ok {
		return nil, nil
	}
	if len(frag) > 4*MaxScriptLink {
		return nil, fmt.Errorf("the link is %d characters long, more than a script link can be", len(frag))
	}
	raw, err := inflateBase64(enc, MaxDumpBytes)
	if err != nil {
		return nil, fmt.Errorf("the machine in the link: %v", err)
	}
	return DumpFromFiles([]string{"dump.tar"}, [][]byte{raw})
}
