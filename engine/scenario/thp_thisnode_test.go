package scenario

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTHPThisnodeSmoke(t *testing.T) {
	s, err := Get("thp-thisnode")
	require.NoError(t, err)
	res, err := s.RunAll(Options{Seed: 1, Runs: 1, Settings: []string{"scale=0.05"}})
	require.NoError(t, err)
	t.Log("\n" + res.Text())
}
