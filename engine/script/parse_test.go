package script

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []Stmt
		err  string
	}{
		{
			name: "words and arguments split on blanks",
			src:  "fill heap size=4M pin=on\n",
			want: []Stmt{{Line: 1, Cmd: "fill", Args: []Arg{{Value: "heap"}, {Key: "size", Value: "4M"}, {Key: "pin", Value: "on"}}}},
		},
		{
			name: "comments and blank lines are skipped and lines are counted",
			src:  "# header\n\n  echo a # trailing\n",
			want: []Stmt{{Line: 3, Cmd: "echo", Args: []Arg{{Value: "a"}}}},
		},
		{
			name: "a quoted value keeps its blanks and escapes",
			src:  `sysctl vm.lowmem_reserve_ratio="256 256 32" echo "say \"hi\" \\"`,
			want: []Stmt{{Line: 1, Cmd: "sysctl", Args: []Arg{{Key: "vm.lowmem_reserve_ratio", Value: "256 256 32"}, {Value: "echo"}, {Value: `say "hi" \`}}}},
		},
		{
			name: "a backslash at the end continues the statement on the next line",
			src:  "region r \\\n  size=1M\nfill r",
			want: []Stmt{
				{Line: 1, Cmd: "region", Args: []Arg{{Value: "r"}, {Key: "size", Value: "1M"}}},
				{Line: 3, Cmd: "fill", Args: []Arg{{Value: "r"}}},
			},
		},
		{
			name: "comparison operators are words, not arguments",
			src:  "expect a == b",
			want: []Stmt{{Line: 1, Cmd: "expect", Args: []Arg{{Value: "a"}, {Value: "=="}, {Value: "b"}}}},
		},
		{
			name: "GFP masks keep their bars",
			src:  "alloc x gfp=GFP_KERNEL|__GFP_NORETRY",
			want: []Stmt{{Line: 1, Cmd: "alloc", Args: []Arg{{Value: "x"}, {Key: "gfp", Value: "GFP_KERNEL|__GFP_NORETRY"}}}},
		},
		{name: "an unterminated quote is an error", src: "\necho \"abc", err: "t:2: unterminated quote"},
		{name: "a quote inside a word is an error", src: `echo ab"c"`, err: "t:1: unexpected quote"},
		{name: "an unknown escape is an error", src: `echo "a\n"`, err: `t:1: in quotes a backslash escapes only`},
		{name: "a line must start with a command", src: "Fill heap", err: `t:1: "Fill" is not a command`},
		{name: "control characters are refused", src: "echo a\x01b", err: "t:1: control character 0x01"},
		{name: "a closing quote needs a blank after it", src: `echo "a"b`, err: "a closing quote must be followed by a blank"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse("t", 1, []byte(tc.src))
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestASizeIsItsPagesRoundedUpEvenAtTheLargestSizeParseSizeReads(t *testing.T) {
	for _, s := range []struct{ bytes, pages uint64 }{
		{0, 0}, {1, 1}, {4096, 1}, {4097, 2},
		{math.MaxUint64, 1 << 52}, {math.MaxUint64 - 4094, 1 << 52}, {math.MaxUint64 - 4095, 1<<52 - 1},
	} {
		assert.Equal(t, s.pages, sizePages(s.bytes), "%d bytes", s.bytes)
	}
}

func TestUnits(t *testing.T) {
	sizes := []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"4096", 4096, true}, {"4K", 4096, true}, {"64M", 64 << 20, true}, {"8G", 8 << 30, true},
		{"1T", 1 << 40, true}, {"2MiB", 2 << 20, true}, {"2MB", 2 << 20, true}, {"512B", 512, true},
		{"", 0, false}, {"M", 0, false}, {"-1M", 0, false}, {"1.5G", 0, false}, {"4iB", 0, false},
		{"99999999999999999999T", 0, false}, {"16777216T", 0, false},
	}
	for _, s := range sizes {
		got, err := ParseSize(s.in)
		if s.ok {
			assert.NoError(t, err, s.in)
			assert.Equal(t, s.want, got, s.in)
		} else {
			assert.Error(t, err, s.in)
		}
	}
	durations := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"10s", 10e9, true}, {"1.5ms", 1.5e6, true}, {"250us", 250e3, true}, {"7ns", 7, true},
		{"2min", 120e9, true}, {"1h", 3600e9, true},
		{"10", 0, false}, {"s", 0, false}, {"1d", 0, false}, {"-1s", 0, false}, {"1e3s", 0, false},
		{"9999999999999999999h", 0, false},
	}
	for _, d := range durations {
		got, err := parseDuration(d.in)
		if d.ok {
			assert.NoError(t, err, d.in)
			assert.Equal(t, d.want, int64(got), d.in)
		} else {
			assert.Error(t, err, d.in)
		}
	}
	assert.Equal(t, "64M", formatSize(64<<20))
	assert.Equal(t, "3000", formatSize(3000))
	assert.Equal(t, "5us", formatDuration(5000))
	assert.Equal(t, "1500ns", formatDuration(1500))
	list, err := parseList("0,2-3,2", 4)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 2, 3}, list)
	_, err = parseList("1-5", 4)
	assert.Error(t, err)
}

func TestSuggestFindsNearNames(t *testing.T) {
	assert.Equal(t, "fill", suggest("fil", commandNames()))
	assert.Equal(t, "fragment", suggest("fragmnet", commandNames()))
	assert.Equal(t, "", suggest("zzzzzz", commandNames()))
}

// FuzzParse checks that Parse never panics and that what it accepts
// formats back to text it reads the same way. The seed corpus (every
// testdata script and a few odd inputs) runs in plain go test.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*")
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err == nil {
			f.Add(string(b))
		}
	}
	for _, s := range []string{"", "\\", "a \\\n", `echo "\\" "" x=""`, "a=b", "x\r\n y", `e "#"`, "e a=\"b c\"d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		stmts, err := Parse("fuzz", 1, []byte(src))
		if err != nil {
			return
		}
		again, err := Parse("fuzz", 1, []byte(Format(stmts)))
		if err != nil {
			t.Fatalf("formatted script does not parse: %v\n%s", err, Format(stmts))
		}
		if len(again) != len(stmts) {
			t.Fatalf("got %d statements back, want %d", len(again), len(stmts))
		}
		for i := range stmts {
			if again[i].Cmd != stmts[i].Cmd || len(again[i].Args) != len(stmts[i].Args) {
				t.Fatalf("statement %d: %q became %q", i, stmts[i].String(), again[i].String())
			}
			for j := range stmts[i].Args {
				if again[i].Args[j] != stmts[i].Args[j] {
					t.Fatalf("statement %d arg %d: %+v became %+v", i, j, stmts[i].Args[j], again[i].Args[j])
				}
			}
			// Checking must not panic either.
			_, _ = check(&stmts[i])
		}
		_ = strings.TrimSpace(src)
	})
}
