package app

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/engine/scenario"
	"github.com/pagesim/pagesim/engine/sim"
)

func testCatalog(t testing.TB) *Catalog {
	t.Helper()
	cat, err := NewCatalog(playground(t))
	require.NoError(t, err)
	return cat
}

func TestAnEmptyFragmentGivesTheDefaultsWithoutComplaint(t *testing.T) {
	cat := testCatalog(t)
	for _, frag := range []string{"", "#"} {
		st, err := cat.Decode(frag)
		require.NoError(t, err)
		assert.True(t, st.Equal(cat.Defaults("")), "fragment %q", frag)
	}
	d := cat.Defaults("")
	assert.Equal(t, "playground", d.Scenario)
	assert.Equal(t, []string{"baseline", "small_pcp"}, d.Variants)
	assert.Equal(t, "256", d.Params["mem"])
	assert.EqualValues(t, DefaultSeed, d.Seed)
	assert.Equal(t, DefaultSpeed, d.Speed)
}

func TestTheDefaultLinkIsShort(t *testing.T) {
	cat := testCatalog(t)
	st := cat.Defaults("")
	st.Time = 12500 * sim.Millisecond
	assert.Equal(t, "v1/playground?seed=1&t=12.5", cat.Encode(st))
}

func TestEveryFieldSurvivesARoundTrip(t *testing.T) {
	cat := testCatalog(t)
	cases := []struct {
		name string
		edit func(*State)
		link string
	}{
		{"seed", func(s *State) { s.Seed = 18446744073709551615 }, "v1/playground?seed=18446744073709551615"},
		{"variants", func(s *State) { s.Variants = []string{"high_wmark"} }, "v1/playground?seed=1&v=high_wmark"},
		{"three variants", func(s *State) { s.Variants = []string{"baseline", "small_pcp", "high_wmark"} }, "v1/playground?seed=1&v=baseline,small_pcp,high_wmark"},
		{"speed", func(s *State) { s.Speed = 0.25 }, "v1/playground?seed=1&x=0.25"},
		{"time", func(s *State) { s.Time = 1 }, "v1/playground?seed=1&t=0.000000001"},
		{"params", func(s *State) { s.Params["nodes"] = "2"; s.Params["fill"] = "90" }, "v1/playground?seed=1&nodes=2&fill=90"},
		{"knobs", func(s *State) {
			s.Knobs = []scenario.Knob{{Name: "vm.watermark_scale_factor", Value: "200"}, {Name: "transparent_hugepage.defrag", Value: "madvise"}}
		}, "v1/playground?seed=1&vm.watermark_scale_factor=200&transparent_hugepage.defrag=madvise"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := cat.Defaults("")
			c.edit(&st)
			link := cat.Encode(st)
			assert.Equal(t, c.link, link)
			back, err := cat.Decode("#" + link)
			require.NoError(t, err)
			assert.True(t, back.Equal(st), "%+v != %+v", back, st)
		})
	}
}

func TestVariantsComeBackInTheScenarioOrder(t *testing.T) {
	cat := testCatalog(t)
	st, err := cat.Decode("v1/playground?v=high_wmark,baseline")
	require.NoError(t, err)
	assert.Equal(t, []string{"baseline", "high_wmark"}, st.Variants)
}

func TestALinkNamingNoScenarioGivesTheDefaultsAndAReason(t *testing.T) {
	cat := testCatalog(t)
	cases := []struct {
		frag, want string
	}{
		{"hello", "not a pagesim v1 link"},
		{"v2/churn?seed=1", "has format v2; this page reads v1"},
		{"v1/nosuch", `unknown scenario "nosuch"`},
		{"v1/playground?" + strings.Repeat("a", MaxLinkLen), "too long"},
	}
	for _, c := range cases {
		t.Run(c.frag[:min(len(c.frag), 30)], func(t *testing.T) {
			st, err := cat.Decode(c.frag)
			var le *LinkError
			require.ErrorAs(t, err, &le)
			assert.False(t, le.Kept)
			assert.Contains(t, err.Error(), c.want)
			assert.True(t, st.Equal(cat.Defaults("")))
		})
	}
}

func TestABadPartOfALinkIsRefusedAndTheRestKept(t *testing.T) {
	cat := testCatalog(t)
	cases := []struct {
		frag, want string
	}{
		{"v1/playground?seed=x", `seed "x" is not a whole number`},
		{"v1/playground?seed=-1", `seed "-1"`},
		{"v1/playground?seed=1&seed=2", `"seed" is given twice (the first is used)`},
		{"v1/playground?v=", "no variant is selected"},
		{"v1/playground?v=baseline,baseline", `variant "baseline" is given twice`},
		{"v1/playground?v=kernel", `no variant "kernel"`},
		{"v1/playground?x=3", `speed "3" is not one of 0.25, 0.5`},
		{"v1/playground?t=1e9", `time "1e9"`},
		{"v1/playground?t=-1", `time "-1"`},
		{"v1/playground?t=100000", "more than 86400 seconds"},
		{"v1/playground?t=1.0000000001", "not a number of seconds"},
		{"v1/playground?nodes=9", `nodes: 9 is above the maximum 4`},
		{"v1/playground?nodes=abc", `nodes: "abc" is not an integer`},
		{"v1/playground?bogus=1", `no parameter "bogus"`},
		{"v1/playground?vm.nosuch=1", `vm.nosuch: no such sysctl`},
		{"v1/playground?vm.watermark_scale_factor=0", `vm.watermark_scale_factor: 0 is out of range`},
		{"v1/playground?vm.defrag_mode=1&vm.defrag_mode=0", `"vm.defrag_mode" is given twice`},
		{"v1/playground?Vm.X=1", `Vm.X: no such sysctl`},
		{"v1/playground?vm.x%3Cb%3E=1", `"vm.x<b>" is not a kernel knob name`},
		{"v1/playground?seed", `damaged near "seed"`},
		{"v1/playground?seed=%zz", `damaged near "seed=%zz"`},
		{"v1/playground?present=yes", `present is a flag`},
		{"v1/playground?text=4", `text size "4" is not one of 1, 2, 3`},
	}
	for _, c := range cases {
		t.Run(c.frag[:min(len(c.frag), 40)], func(t *testing.T) {
			st, err := cat.Decode(c.frag + "&mem=64&fill=90")
			var le *LinkError
			require.ErrorAs(t, err, &le)
			assert.True(t, le.Kept)
			assert.Contains(t, err.Error(), c.want)
			assert.Equal(t, "64", st.Params["mem"], "the rest of the link is kept")
			assert.Equal(t, "90", st.Params["fill"])
		})
	}
	st, err := cat.Decode("v1/playground?nodes=9&mem=abc&fill=90")
	var le *LinkError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, map[string]string{"nodes": "9 is above the maximum 4", "mem": `"abc" is not an integer`}, le.Params)
	assert.Equal(t, map[string]string{"nodes": "9", "mem": "abc"}, le.Values)
	assert.Equal(t, "nodes: 9 is above the maximum 4; mem: \"abc\" is not an integer", le.Reason)
	assert.Equal(t, "1", st.Params["nodes"])
	assert.Equal(t, "256", st.Params["mem"])
}

func TestTheViewModesAreFlagsAtTheEndOfTheLink(t *testing.T) {
	cat := testCatalog(t)
	st := cat.Defaults("")
	st.Present, st.Embed, st.TextSize = true, true, 2
	link := cat.Encode(st)
	assert.Equal(t, "v1/playground?seed=1&text=2&present&embed", link)
	back, err := cat.Decode(link)
	require.NoError(t, err)
	assert.True(t, back.Equal(st))
	back, err = cat.Decode("v1/playground?embed=1&present=0")
	require.NoError(t, err)
	assert.True(t, back.Embed)
	assert.False(t, back.Present)
}

// A link pasted into a plain-text mail must come out whole: one word
// (no space, nothing a mail client wraps at) far shorter than a mail's
// 998-character line, however many parameters and knobs it carries.
func TestALongParameterListStaysOneShortWord(t *testing.T) {
	cat, err := DefaultCatalog()
	require.NoError(t, err)
	in, ok := cat.Lookup("thp-thisnode")
	require.True(t, ok)
	st := cat.Defaults(in.ID)
	var sizes []string
	for i := 0; i < 16; i++ {
		sizes = append(sizes, strconv.FormatFloat(30.25+float64(i)*1.5, 'f', -1, 64))
	}
	st.Params["guest_gb"] = strings.Join(sizes, ",")
	st.Params["nodes"], st.Params["node_gb"], st.Params["cpus"] = "4", "48.5", "16"
	st.Params["vfio"], st.Params["madvise"], st.Params["mempolicy"] = "false", "false", "interleave:0-3"
	st.Params["swap_gb"], st.Params["host_gb"], st.Params["scale"] = "16.5", "2.25", "0.0625"
	for _, k := range []string{"vm.defrag_mode=1", "vm.watermark_scale_factor=200", "vm.watermark_boost_factor=0",
		"vm.min_free_kbytes=90112", "vm.extfrag_threshold=500", "vm.compaction_proactiveness=20", "vm.swappiness=100",
		"transparent_hugepage.defrag=defer+madvise", "transparent_hugepage.enabled=madvise",
		"transparent_hugepage.hugepages-64kB.enabled=always", "transparent_hugepage.hugepages-2048kB.enabled=inherit",
		"vm.percpu_pagelist_high_fraction=8"} {
		name, value, _ := strings.Cut(k, "=")
		kb, err := scenario.CheckKnob(name, value)
		require.NoError(t, err, k)
		st.Knobs = append(st.Knobs, kb)
	}
	st.Seed, st.Speed, st.Time, st.Variants = 18446744073709551615, 0.25, 86399999999999, []string{"upstream", "modern"}
	st.Present, st.TextSize = true, 3
	frag := cat.Encode(st)
	link := "https://pagesim.example.org/#" + frag
	t.Logf("%d characters: %s", len(link), link)
	assert.Less(t, len(frag), MaxShareLen-200, "room for an origin and path of 200 characters")
	assert.Regexp(t, `^[A-Za-z0-9:/.#?=&,_+%~-]+$`, link, "one word, nothing a mail client breaks a line at")
	back, err := cat.Decode(link[strings.Index(link, "#"):])
	require.NoError(t, err)
	assert.True(t, back.Equal(st))
}

func TestAnErrorQuotesAtMostAShortPieceOfTheLink(t *testing.T) {
	cat := testCatalog(t)
	_, err := cat.Decode("v1/" + strings.Repeat("<script>", 100))
	require.Error(t, err)
	assert.Less(t, len(err.Error()), 200)
}

func TestSecondsPrintAndParseExactly(t *testing.T) {
	for _, c := range []struct {
		t sim.Time
		s string
	}{
		{0, "0"}, {sim.Second, "1"}, {1500 * sim.Millisecond, "1.5"}, {sim.Millisecond, "0.001"},
		{123*sim.Second + 456789012, "123.456789012"},
	} {
		assert.Equal(t, c.s, FormatSeconds(c.t))
		back, err := ParseSeconds(c.s)
		require.NoError(t, err)
		assert.Equal(t, c.t, back)
	}
	for _, bad := range []string{"", ".", "1.", "a", "1.2.3", "+1", " 1", "1e3"} {
		_, err := ParseSeconds(bad)
		assert.Error(t, err, bad)
	}
	// A number past MaxLinkTime is refused as that, however many digits
	// it has (F43).
	for _, big := range []string{"86401", "999999", "99999999", "12345678901234567890.5"} {
		_, err := ParseSeconds(big)
		assert.EqualError(t, err, "more than 86400 seconds", big)
	}
}

func TestAParamValueIsEscapedInTheLink(t *testing.T) {
	cat, err := NewCatalog(fakeSpec(t))
	require.NoError(t, err)
	st := cat.Defaults("")
	st.Params["label"] = "a b&c=d/é"
	link := cat.Encode(st)
	assert.NotContains(t, link, " ")
	back, err := cat.Decode(link)
	require.NoError(t, err)
	assert.Equal(t, "a b&c=d/é", back.Params["label"])
}

// FuzzDecodeFragment: the decoder never panics, an error that keeps
// nothing leaves the defaults, and whatever it keeps (all of the link or
// its valid parts) encodes to a link that decodes to the same state.
func FuzzDecodeFragment(f *testing.F) {
	cat := testCatalog(f)
	for _, s := range []string{"", "v1/playground", "v1/playground?seed=3&v=high_wmark&x=10&t=1.5&nodes=2",
		"v1/playground?t=0.001", "v2/x", "v1/playground?seed=1&seed=1", "v1/playground?%", "v1/playground?nodes=4&fill=0&mem=16", "v1/playground?vm.defrag_mode=1&transparent_hugepage.enabled=never"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, frag string) {
		st, err := cat.Decode(frag)
		if err != nil {
			if utf8.ValidString(frag) && !utf8.ValidString(err.Error()) {
				t.Fatalf("error text is not UTF-8: %q", err.Error())
			}
			if le, ok := err.(*LinkError); !ok || !le.Kept {
				if !st.Equal(cat.Defaults("")) {
					t.Fatalf("error %v but state %+v", err, st)
				}
				return
			}
		}
		link := cat.Encode(st)
		back, err := cat.Decode(link)
		if err != nil {
			t.Fatalf("re-decoding %q (from %q): %v", link, frag, err)
		}
		if !back.Equal(st) {
			t.Fatalf("%q -> %+v -> %q -> %+v", frag, st, link, back)
		}
	})
}

// small is a scenario the page opens at a smaller size than its defaults.
func small(t *testing.T, mem string) *scenario.Spec {
	t.Helper()
	s := *playground(t)
	s.ID = "small"
	s.PageParams = map[string]string{"mem": mem}
	return &s
}

func TestThePageOpensWithItsOwnParametersAndTheLinkSaysSo(t *testing.T) {
	cat, err := NewCatalog(small(t, "64"), playground(t))
	require.NoError(t, err)
	st, err := cat.Decode("")
	require.NoError(t, err)
	assert.Equal(t, "64", st.Params["mem"])
	assert.Equal(t, "v1/small?seed=1&mem=64", cat.Encode(st), "the link spells the page's value out")
	// A link without the parameter means the scenario's default, as
	// `pagesim run` without --set does.
	st, err = cat.Decode("v1/small?seed=1")
	require.NoError(t, err)
	assert.Equal(t, "256", st.Params["mem"])
	// A link that names no scenario falls back to what the page opens
	// with.
	st, err = cat.Decode("v1/nosuch?mem=x")
	require.Error(t, err)
	assert.Equal(t, "64", st.Params["mem"])

	c := NewController(cat, Options{Link: "v1/playground?mem=32"})
	require.NoError(t, c.SelectScenario("small"))
	assert.Equal(t, "64", c.State().Params["mem"], "the picker opens a scenario as the page does")
}

func TestAPageParameterMustPassItsCheck(t *testing.T) {
	_, err := NewCatalog(small(t, "1"))
	assert.ErrorContains(t, err, "the page's mem=1 fails its check")
}

func TestThePageOffersEveryListedScenarioThenThePlayground(t *testing.T) {
	cat, err := DefaultCatalog()
	require.NoError(t, err)
	list := cat.Scenarios()
	require.Len(t, list, len(scenario.All())+1)
	var want, later []*scenario.Spec
	for _, s := range scenario.All() {
		if s.NotOpening {
			later = append(later, s)
		} else {
			want = append(want, s)
		}
	}
	require.NotEmpty(t, later, "noretry-compaction is listed but does not open the page")
	want = append(want, later...)
	for i, s := range want {
		assert.Same(t, s, list[i], "by seed, those the page does not open on last")
	}
	assert.Equal(t, "playground", list[len(list)-1].ID)
	assert.Equal(t, list[0].ID, cat.Defaults("").Scenario, "the first is the default")
	assert.False(t, list[0].NotOpening)
	noretry, ok := cat.Lookup("noretry-compaction")
	require.True(t, ok, "the page offers noretry-compaction")
	assert.True(t, noretry.NotOpening)
}

func TestTheSpeedKeysStepThroughTheSpeeds(t *testing.T) {
	assert.Equal(t, 2.0, NextSpeed(1, true))
	assert.Equal(t, 0.5, NextSpeed(1, false))
	assert.Equal(t, 1000.0, NextSpeed(1000, true))
	assert.Equal(t, 0.25, NextSpeed(0.25, false))
}
