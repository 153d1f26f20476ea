//go:build unix

package main

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestScriptRefusesAFIFOWithoutBlocking(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	code, out, errs := run("script", fifo)
	assert.Equal(t, exitInput, code)
	assert.Empty(t, out)
	assert.Equal(t, "pagesim script: "+fifo+" is a FIFO (give it as standard input: pagesim script - < FILE), not a script file\n", errs)
}
