package main

import (
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
		{"no anchor (another Ebiten version)", "package graphics\n\nfunc CompileShader(src []byte) (*shaderir.Program, error) {\n}\n", "has 0 lines"},
		{"the anchor twice", compileShaderAnchor + "}\n" + compileShaderAnchor + "}\n", "has 2 lines"},
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
