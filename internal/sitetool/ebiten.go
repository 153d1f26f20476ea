package main

// The ebiten-patch step: Ebiten with its built-in shaders compiled at build
// time.
//
//	go run ./internal/sitetool ebiten-patch DIR
//
// Ebiten writes its built-in shaders (the one DrawImage uses, clearing,
// the final scaling to the screen) in its own shading language, Kage, and
// compiles them when the program starts: internal/restorable's package
// init compiles three of them before main runs, with a compiler built on
// go/parser, go/constant and math/big. In the browser that compiler is cold
// code, each function compiled by V8 on its first call, and it took
// 0.33-0.5 s of a 2-2.5 s start (measured with a timer around
// graphics.CompileShader in the page; docs/PERFORMANCE.md). The programs
// it produces never change for a given Ebiten version.
//
// So build.sh builds the wasm binary against a copy of the Ebiten module of
// go.mod in which graphics.CompileShader first looks its source up in a
// table of the built-in shaders' compiled programs and returns a new copy
// of the match; any other source is compiled as before. The table is
// generated, never written by hand: this step copies the module into
// DIR/module (without examples and tests), adds the hook and the test file
// precompile_test.go.in to its internal/graphics package, and runs that
// test natively twice: TestPagesimPrecompile compiles every built-in source
// with Ebiten's own compiler and writes the table as Go source, and
// TestPagesimPrecompiledMatches checks that every precompiled program
// translates to the same GLSL as a fresh compilation (a failing check fails
// the build). DIR/wasm.mod is go.mod plus a replace directive naming the
// copy, for `go build -modfile`. The copy is redone only when the Ebiten
// version, the Go version or this step's inputs change (DIR/stamp).
//
// The copy carries a second change, to internal/ui/ui_js.go: Ebiten reads
// window.devicePixelRatio once and keeps it (Monitor.DeviceScaleFactor;
// its updateImpl has a TODO for the change), so a browser zoom, or a
// window dragged to a screen of another density, left the map drawn at the
// old density, its text at the old size, until a reload. The hook reads
// the ratio at the start of each frame's update (one property read) and,
// when it changed, keeps the new one and resizes the canvas's drawing
// buffer; Ebiten then lays the game out again at the new factor
// (ebview.Game.LayoutF).
//
// Only the wasm build uses the copy; the native command and the tests use
// the module as go.mod has it. PAGESIM_EBITEN_PATCH=off makes build.sh
// skip this step.

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

//go:embed precompile_test.go.in
var precompileTest []byte

const ebitenModule = "github.com/hajimehoshi/ebiten/v2"

// compileShaderAnchor is the line of internal/graphics/shader.go that the
// hook goes after; compileShaderHook is the hook.
const (
	compileShaderAnchor = "func CompileShader(fragmentSrc []byte) (*shaderir.Program, error) {\n"
	compileShaderHook   = "\tif ir := pagesimPrecompiled(fragmentSrc); ir != nil {\n\t\treturn ir, nil\n\t}\n"
	precompiledStub     = "package graphics\n\nimport \"github.com/hajimehoshi/ebiten/v2/internal/shaderir\"\n\nfunc pagesimPrecompiled([]byte) *shaderir.Program { return nil }\n"
)

// dprAnchor is the comment of internal/ui/ui_js.go's updateImpl that the
// hook dprHook replaces (Ebiten's own note that it does not follow a
// change of the ratio).
const (
	dprAnchor = "\t// TODO: If DeviceScaleFactor changes, call updateScreenSize.\n" +
		"\t// Now there is not a good way to detect the change.\n" +
		"\t// See also https://crbug.com/123694.\n"
	dprHook = "\t// pagesim (internal/sitetool/ebiten.go): follow a change of\n" +
		"\t// devicePixelRatio (a browser zoom, another screen).\n" +
		"\tif theUI.hiDPIEnabled && theMonitor.deviceScaleFactor != 0 {\n" +
		"\t\tif r := window.Get(\"devicePixelRatio\").Float(); r > 0 && r != theMonitor.deviceScaleFactor {\n" +
		"\t\t\ttheMonitor.deviceScaleFactor = r\n" +
		"\t\t\tu.updateScreenSize()\n" +
		"\t\t}\n" +
		"\t}\n"
)

// addHook returns the source of internal/graphics/shader.go with the
// precompiled shaders' hook added, or an error if the anchor is not there
// exactly once (another Ebiten version: the step must then be looked at,
// not guessed).
func addHook(src []byte) ([]byte, error) {
	return replaceOnce(src, "internal/graphics/shader.go", compileShaderAnchor, compileShaderAnchor+compileShaderHook)
}

// addDPRHook returns the source of internal/ui/ui_js.go with the
// devicePixelRatio hook in place of Ebiten's TODO, or an error as addHook.
func addDPRHook(src []byte) ([]byte, error) {
	return replaceOnce(src, "internal/ui/ui_js.go", dprAnchor, dprHook)
}

func replaceOnce(src []byte, file, anchor, with string) ([]byte, error) {
	if n := bytes.Count(src, []byte(anchor)); n != 1 {
		return nil, fmt.Errorf("%s has %d times the lines %q, want 1: this Ebiten version needs a new look at internal/sitetool/ebiten.go", file, n, strings.TrimSpace(anchor))
	}
	return bytes.Replace(src, []byte(anchor), []byte(with), 1), nil
}

// withReplace returns go.mod's text with the replace directive for the
// copy added.
func withReplace(gomod []byte, dir string) ([]byte, error) {
	for _, line := range strings.Split(string(gomod), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "replace" && f[1] == ebitenModule {
			return nil, fmt.Errorf("go.mod already replaces %s", ebitenModule)
		}
	}
	out := append([]byte(nil), gomod...)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	return append(out, fmt.Sprintf("\n// Added by sitetool ebiten-patch for the wasm build.\nreplace %s => ./%s\n", ebitenModule, filepath.ToSlash(dir))...), nil
}

func ebitenPatch(dir string) error {
	if filepath.IsAbs(dir) || strings.HasPrefix(filepath.Clean(dir), "..") {
		return fmt.Errorf("ebiten-patch: %s must be a folder inside the repository, given relative to its root", dir)
	}
	dir = filepath.Clean(dir)
	m, err := moduleOf(ebitenModule)
	if err != nil {
		return err
	}
	gomod, err := os.ReadFile("go.mod")
	if err != nil {
		return err
	}
	gosum, err := os.ReadFile("go.sum")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	modCopy := filepath.Join(dir, "module")
	wasmMod, err := withReplace(gomod, modCopy)
	if err != nil {
		return err
	}
	if err := WriteIfChanged(filepath.Join(dir, "wasm.mod"), wasmMod); err != nil {
		return err
	}
	if err := WriteIfChanged(filepath.Join(dir, "wasm.sum"), gosum); err != nil {
		return err
	}

	h := sha256.New()
	fmt.Fprintf(h, "%s %s %s\n%s\n%s\n%s\n", m.Path, m.Version, runtime.Version(), compileShaderHook, precompiledStub, dprHook)
	h.Write(precompileTest)
	stamp := []byte(m.Version + " " + hex.EncodeToString(h.Sum(nil)) + "\n")
	stampPath := filepath.Join(dir, "stamp")
	if old, err := os.ReadFile(stampPath); err == nil && bytes.Equal(old, stamp) {
		return nil
	}
	os.Remove(stampPath)
	if err := os.RemoveAll(modCopy); err != nil {
		return err
	}
	if err := copyModule(m.Dir, modCopy); err != nil {
		return err
	}
	gfx := filepath.Join(modCopy, "internal", "graphics")
	src, err := os.ReadFile(filepath.Join(gfx, "shader.go"))
	if err != nil {
		return err
	}
	hooked, err := addHook(src)
	if err != nil {
		return err
	}
	uiJS := filepath.Join(modCopy, "internal", "ui", "ui_js.go")
	src, err = os.ReadFile(uiJS)
	if err != nil {
		return err
	}
	dprHooked, err := addDPRHook(src)
	if err != nil {
		return err
	}
	table := filepath.Join(gfx, "zz_pagesim_precompiled.go")
	for path, data := range map[string][]byte{
		uiJS:                            dprHooked,
		filepath.Join(gfx, "shader.go"): hooked,
		table:                           []byte(precompiledStub),
		filepath.Join(gfx, "zz_pagesim_precompile_test.go"): precompileTest,
	} {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return err
		}
	}
	abs, err := filepath.Abs(table)
	if err != nil {
		return err
	}
	for _, test := range []string{"TestPagesimPrecompile", "TestPagesimPrecompiledMatches"} {
		cmd := exec.Command("go", "test", "-modfile="+filepath.Join(dir, "wasm.mod"), "-count=1", "-run", "^"+test+"$", ebitenModule+"/internal/graphics")
		cmd.Env = append(nativeEnv(), "PAGESIM_PRECOMPILED_OUT="+abs)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("ebiten-patch: %s: %v\n%s", test, err, out)
		}
	}
	return os.WriteFile(stampPath, stamp, 0o644)
}

// nativeEnv is the environment without a GOOS or GOARCH set for the wasm
// build: the shader tests run on this machine.
func nativeEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOOS=") && !strings.HasPrefix(kv, "GOARCH=") {
			env = append(env, kv)
		}
	}
	return env
}

// copyModule copies a module tree without its examples, tests and test
// data, writable (the module cache is read-only).
func copyModule(from, to string) error {
	return filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "examples", "testdata", ".git":
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		if strings.HasSuffix(d.Name(), "_test.go") || !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), data, 0o644)
	})
}
