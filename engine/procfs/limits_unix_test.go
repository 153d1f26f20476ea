//go:build unix

package procfs_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoadRefusesAFIFOWithoutBlocking(t *testing.T) {
	dir := copyDump(t, "jc-linux-proc", nil)
	require.NoError(t, os.Remove(filepath.Join(dir, "buddyinfo")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "buddyinfo"), 0o644))
	m, _, err := importDir(t, dir) // fails the test if it blocks for 10 s
	require.Error(t, err)
	assert.Nil(t, m)
	assert.Equal(t, "buddyinfo: not a regular file (a FIFO)", err.Error())
}
