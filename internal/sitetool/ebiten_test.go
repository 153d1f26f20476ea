package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAddHook(t *testing.T) {
	for _, tc := range []struct {
		name, src, err string
	}{
		{"the anchor once", "package graphics\n\n" + compileShaderAnchor + "\tsrc, err := completeShaderSource(fragmentSrc)\n}\n", ""},
		{"no anchor (another Ebiten version)", "package graphics\n\nfunc CompileShader(src []byte) (*shaderir.Program, error) {\n}\n", "has 0 times the lines"},
		{"the anchor twice", compileShaderAnchor + "}\n" + compileShaderAnchor + "}\n", "has 2 times the lines"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := addHook([]byte(tc.src))
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				assert.Contains(t, err.Error(), "internal/sitetool/ebiten.go")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, strings.Replace(tc.src, compileShaderAnchor, compileShaderAnchor+compileShaderHook, 1), string(out))
			assert.Equal(t, 1, strings.Count(string(out), "pagesimPrecompiled(fragmentSrc)"))
		})
	}
}

// The devicePixelRatio hook replaces Ebiten v2.8.8's TODO in updateImpl,
// and refuses a source without it.
func TestAddDPRHook(t *testing.T) {
	src := "func (u *UserInterface) updateImpl(force bool) error {\n" + dprAnchor + "\n\tw, h := u.outsideSize()\n}\n"
	out, err := addDPRHook([]byte(src))
	require.NoError(t, err)
	assert.NotContains(t, string(out), "TODO")
	assert.Contains(t, string(out), "theMonitor.deviceScaleFactor = r\n\t\t\tu.updateScreenSize()")
	assert.True(t, strings.HasSuffix(string(out), "\t}\n\n\tw, h := u.outsideSize()\n}\n"))
	_, err = addDPRHook([]byte("func (u *UserInterface) updateImpl(force bool) error {\n}\n"))
	assert.ErrorContains(t, err, "internal/ui/ui_js.go has 0 times the lines")
}

// The anchor is in the Ebiten version go.mod requires (the module cache
// has it: the tests build against it).
func TestTheDPRAnchorIsInTheRequiredEbiten(t *testing.T) {
	m, err := moduleOf(ebitenModule)
	require.NoError(t, err)
	src, err := os.ReadFile(filepath.Join(m.Dir, "internal", "ui", "ui_js.go"))
	require.NoError(t, err)
	_, err = addDPRHook(src)
	assert.NoError(t, err)
}

func TestWithReplace(t *testing.T) {
	out, err := withReplace([]byte("module m\n\ngo 1.26\n\nrequire github.com/hajimehoshi/ebiten/v2 v2.8.8"), "bin/ebiten/module")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(out), "module m\n\ngo 1.26\n\nrequire github.com/hajimehoshi/ebiten/v2 v2.8.8\n"))
	assert.Contains(t, string(out), "\nreplace github.com/hajimehoshi/ebiten/v2 => ./bin/ebiten/module\n")

	_, err = withReplace([]byte("module m\nreplace github.com/hajimehoshi/ebiten/v2 => ../ebiten\n"), "bin/ebiten/module")
	assert.ErrorContains(t, err, "already replaces")
}

func TestEbitenPatchWantsAFolderInTheRepository(t *testing.T) {
	for _, dir := range []string{"/tmp/x", "../x"} {
		assert.ErrorContains(t, ebitenPatch(dir), "must be a folder inside the repository", dir)
	}
}
