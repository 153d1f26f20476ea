package mm

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseMempolicyReadsWhatMpolParseStrReads(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Mempolicy
		err  string
	}{
		{"default takes no nodes", "default", Mempolicy{Mode: MPOL_DEFAULT}, ""},
		{"bind takes a node", "bind:0", Mempolicy{Mode: MPOL_BIND, Nodes: 1}, ""},
		{"bind takes a range", "bind:0-1", Mempolicy{Mode: MPOL_BIND, Nodes: 3}, ""},
		{"bind takes a list of nodes and ranges", "bind:0,2-3", Mempolicy{Mode: MPOL_BIND, Nodes: 0b1101}, ""},
		{"preferred takes one node", "preferred:1", Mempolicy{Mode: MPOL_PREFERRED, Nodes: 2}, ""},
		{"prefer is the kernel's spelling of preferred", "prefer:1", Mempolicy{Mode: MPOL_PREFERRED, Nodes: 2}, ""},
		{"preferred without a node is local allocation (mpol_new)", "preferred", Mempolicy{Mode: MPOL_LOCAL}, ""},
		{"interleave defaults to every node", "interleave", Mempolicy{Mode: MPOL_INTERLEAVE, Nodes: 0b1111}, ""},
		{"interleave takes a list", "interleave:1-2", Mempolicy{Mode: MPOL_INTERLEAVE, Nodes: 0b110}, ""},
		{"bind without nodes is refused (it would read as every node)", "bind", Mempolicy{}, "mempolicy bind: needs a node list, such as bind:0 or bind:0-1"},
		{"bind with an empty list is refused", "bind:", Mempolicy{}, `mempolicy bind:: "" is not a node list such as 0 or 0-1`},
		{"a node the machine lacks is refused", "bind:4", Mempolicy{}, "mempolicy bind:4: node 4 does not exist (nodes 0 to 3)"},
		{"preferred with two nodes is refused", "preferred:0-1", Mempolicy{}, "mempolicy preferred:0-1: takes one node"},
		{"default with nodes is refused", "default:0", Mempolicy{}, "mempolicy default:0: takes no node list"},
		{"local with nodes is refused", "local:0", Mempolicy{}, "mempolicy local:0: takes no node list"},
		{"an unknown mode is refused", "random", Mempolicy{}, `unknown mempolicy "random" (want default, preferred, bind, interleave, local)`},
		{"a reversed range is refused", "bind:3-1", Mempolicy{}, `mempolicy bind:3-1: "3-1" is not a node list such as 0 or 0-1`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseMempolicy(tc.in, 4)
			if tc.err != "" {
				require.EqualError(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			if tc.want.Mode != MPOL_LOCAL {
				again, err := ParseMempolicy(got.String(), 4)
				require.NoError(t, err, "String() prints what ParseMempolicy reads: %s", got)
				assert.Equal(t, got, again)
			}
		})
	}
}
