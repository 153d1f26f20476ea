package app

// permalink.go encodes the page's whole state in the URL fragment and reads
// it back.
//
// # Format
//
//	v1/<scenario>[?<key>=<value>&...]
//
// Keys, in the order Encode writes them:
//
//	seed  the RNG seed (decimal uint64)
//	v     the selected variants, comma separated
//	x     the speed (simulated seconds per wall second: 0.25 ... 1000)
//	t     the simulated time reached, in seconds ("2.5")
//	NAME  a scenario parameter, only when it differs from its default
//	A.B   a kernel knob (vm.defrag_mode=1, transparent_hugepage.defrag=
//	      madvise): any key with a dot, in the order the user gave them
//	text  the map text's size setting, 2 or 3 (1 is left out)
//	present  presentation mode (a flag: no value)
//	embed    the mode for an iframe (a flag)
//
// v and x are left out when they equal the defaults and t when it is 0, so
// a typical link is "#v1/playground?seed=7&t=12.5". Values are
// query-escaped. The version prefix lets a later format (v2) change all
// of this; a v1 decoder refuses anything else with a message that says so.
//
// Decoding reads each key on its own: an unknown key, a repeated key (the
// first counts), a value that fails its check or a damaged escape is
// refused and left at its default, the rest of the link still applies,
// and the error says what was refused (LinkError). Only a link that names
// no scenario the page has (another format, an unknown scenario, more than
// MaxLinkLen characters) falls back to the page's opening state. The
// error text may quote parts of the link; the page inserts it as text,
// never as HTML.
//
// # Length
//
// A link is one unbroken word: Encode escapes everything but letters,
// digits, "-_.~", the list commas and the separators, so a mail client
// that wraps lines at spaces never breaks it, and a plain-text reader can
// select it whole. Its one limit is the line of a mail: RFC 5322 caps a
// line at 998 characters, and MaxShareLen keeps the whole URL, origin and
// path included, under that (the panel warns past it). The longest link a
// scenario's parameters and a dozen knobs make is far shorter
// (TestALongParameterListStaysOneShortWord).

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/pagesim/pagesim/engine/scenario"
	"github.com/pagesim/pagesim/engine/sim"
)

// LinkVersion is the permalink format version Encode writes.
const LinkVersion = "v1"

// MaxLinkLen bounds the fragment a decoder accepts.
const MaxLinkLen = 4096

// MaxShareLen is the longest whole URL (origin, path and fragment) the
// page offers without a warning: RFC 5322's 998-character line, less
// the angle brackets a mail puts around a URL.
const MaxShareLen = 996

// MaxLinkTime bounds the simulated time a link may ask the page to reach.
const MaxLinkTime = 24 * 3600 * sim.Second

// reservedKeys are the permalink keys that are not scenario parameters.
var reservedKeys = map[string]bool{"seed": true, "v": true, "x": true, "t": true, "present": true, "embed": true, "text": true}

// Speeds are the speeds the page offers, in simulated seconds per wall
// second.
var Speeds = []float64{0.25, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000}

// DefaultSpeed is the speed the page opens with.
const DefaultSpeed = 1.0

// DefaultSeed is the seed the page opens with.
const DefaultSeed = 1

// State is everything a permalink carries.
type State struct {
	Scenario string
	// Variants are the selected variants, in the scenario's order.
	Variants []string
	// Params holds every parameter of the scenario.
	Params map[string]string
	Seed   uint64
	Speed  float64
	// Time is the simulated time reached (restored by running to it).
	Time sim.Time
	// Knobs are the user's kernel knobs, in order.
	Knobs []scenario.Knob

	// How the page shows the runs (they change nothing in them):
	// Present is presentation mode, Embed the mode for an iframe, and
	// TextSize the map text's size setting (1 to MaxTextSize; 0 is 1).
	Present, Embed bool
	TextSize       int
}

// MaxTextSize is the largest map text size setting (3x).
const MaxTextSize = 3

// Equal reports whether two states are the same.
func (s State) Equal(o State) bool {
	if s.Scenario != o.Scenario || s.Seed != o.Seed || s.Speed != o.Speed || s.Time != o.Time {
		return false
	}
	if s.Present != o.Present || s.Embed != o.Embed || max(s.TextSize, 1) != max(o.TextSize, 1) {
		return false
	}
	if !slices.Equal(s.Variants, o.Variants) || len(s.Params) != len(o.Params) || !slices.Equal(s.Knobs, o.Knobs) {
		return false
	}
	for k, v := range s.Params {
		if w, ok := o.Params[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// Catalog is the list of scenarios the page offers.
type Catalog struct {
	list []*scenario.Spec
}

// NewCatalog checks every scenario and returns the catalog. The first
// scenario is the default.
func NewCatalog(list ...*scenario.Spec) (*Catalog, error) {
	if len(list) == 0 {
		return nil, errors.New("no scenarios")
	}
	seen := map[string]bool{}
	for _, s := range list {
		if err := s.Check(); err != nil {
			return nil, err
		}
		if seen[s.ID] {
			return nil, fmt.Errorf("scenario %s is listed twice", s.ID)
		}
		seen[s.ID] = true
		for _, p := range s.Params {
			if reservedKeys[p.Name] {
				return nil, fmt.Errorf("scenario %s: parameter %q is a reserved permalink key", s.ID, p.Name)
			}
		}
	}
	return &Catalog{list: list}, nil
}

// DefaultCatalog is what the page offers: every scenario `pagesim
// scenarios` lists, by seed, those marked NotOpening after the others
// (the first is the page's default), then the playground.
func DefaultCatalog() (*Catalog, error) {
	pg, err := scenario.Get("playground")
	if err != nil {
		return nil, err
	}
	var list, later []*scenario.Spec
	for _, s := range scenario.All() {
		if s.NotOpening {
			later = append(later, s)
		} else {
			list = append(list, s)
		}
	}
	return NewCatalog(append(append(list, later...), pg)...)
}

// Scenarios returns every scenario, in catalog order.
func (c *Catalog) Scenarios() []*scenario.Spec { return c.list }

// Lookup returns the scenario with the given ID.
func (c *Catalog) Lookup(id string) (*scenario.Spec, bool) {
	for _, s := range c.list {
		if s.ID == id {
			return s, true
		}
	}
	return nil, false
}

// Defaults returns a scenario's defaults (the first scenario's if name is
// unknown): its default variants and parameters, as `pagesim run` has
// them. A link's values apply on top of these.
func (c *Catalog) Defaults(name string) State {
	s, ok := c.Lookup(name)
	if !ok {
		s = c.list[0]
	}
	st := State{Scenario: s.ID, Seed: DefaultSeed, Speed: DefaultSpeed, Params: map[string]string{}}
	st.Variants = s.DefaultVariants()
	for _, p := range s.Params {
		st.Params[p.Name] = p.Default
	}
	return st
}

// Opening returns the state the page opens a scenario with (the first
// scenario if name is unknown): its Defaults with the scenario's
// PageParams.
func (c *Catalog) Opening(name string) State {
	st := c.Defaults(name)
	s, _ := c.Lookup(st.Scenario)
	for k, v := range s.PageParams {
		st.Params[k] = v
	}
	return st
}

// Encode writes st as a fragment (without the leading '#').
func (c *Catalog) Encode(st State) string {
	in, _ := c.Lookup(st.Scenario)
	var kv []string
	kv = append(kv, "seed="+strconv.FormatUint(st.Seed, 10))
	if !slices.Equal(st.Variants, in.DefaultVariants()) {
		kv = append(kv, "v="+strings.Join(st.Variants, ","))
	}
	if st.Speed != DefaultSpeed {
		kv = append(kv, "x="+formatSpeed(st.Speed))
	}
	if st.Time > 0 {
		kv = append(kv, "t="+FormatSeconds(st.Time))
	}
	for _, p := range in.Params {
		if v, ok := st.Params[p.Name]; ok && v != p.Default {
			// Commas (lists such as guest_gb=30,34) stay readable.
			kv = append(kv, p.Name+"="+strings.ReplaceAll(url.QueryEscape(v), "%2C", ","))
		}
	}
	for _, k := range st.Knobs {
		kv = append(kv, k.Name+"="+strings.ReplaceAll(url.QueryEscape(k.Value), "%2C", ","))
	}
	if st.TextSize > 1 {
		kv = append(kv, "text="+strconv.Itoa(st.TextSize))
	}
	if st.Present {
		kv = append(kv, "present")
	}
	if st.Embed {
		kv = append(kv, "embed")
	}
	return LinkVersion + "/" + st.Scenario + "?" + strings.Join(kv, "&")
}

// LinkError is a link the decoder could not read in full.
type LinkError struct {
	// Reason says what was wrong: every part refused, in the link's
	// order, each named once.
	Reason string
	// Kept is true when the link named a scenario the page has: Decode's
	// state then holds every part it could read, with the defaults in
	// place of the refused ones. When false, the state is the page's
	// opening one.
	Kept bool
	// Params maps each refused scenario parameter to why it was refused
	// (without its name: "9 is above the maximum 4"), and Values to the
	// value as the link wrote it (clipped), for the panel to mark.
	Params, Values map[string]string
}

func (e *LinkError) Error() string { return e.Reason }

func linkErr(format string, args ...any) error {
	return &LinkError{Reason: fmt.Sprintf(format, args...)}
}

// Decode reads a fragment (with or without the leading '#'). An empty
// fragment gives the opening state and no error. A link the decoder
// cannot read in full gives a *LinkError: if it names a known scenario,
// the state keeps every part that could be read (LinkError.Kept);
// otherwise it is the opening state.
func (c *Catalog) Decode(frag string) (State, error) {
	frag = strings.TrimPrefix(frag, "#")
	if frag == "" {
		return c.Opening(""), nil
	}
	st, err := c.decode(frag)
	if err != nil {
		if le, ok := err.(*LinkError); ok && le.Kept {
			return st, err
		}
		return c.Opening(""), err
	}
	return st, nil
}

// linkFlags are the permalink keys that take no value: "&embed" or
// "&embed=1" turn the mode on.
var linkFlags = map[string]bool{"present": true, "embed": true}

func (c *Catalog) decode(frag string) (State, error) {
	if len(frag) > MaxLinkLen {
		return State{}, linkErr("the link is too long (%d characters, at most %d)", len(frag), MaxLinkLen)
	}
	ver, rest, ok := strings.Cut(frag, "/")
	if !ok || ver != LinkVersion {
		if len(ver) > 1 && ver[0] == 'v' && allDigits(ver[1:]) {
			return State{}, linkErr("the link has format %s; this page reads %s", clip(ver), LinkVersion)
		}
		return State{}, linkErr("the link is not a pagesim %s link (it should start with #%s/)", LinkVersion, LinkVersion)
	}
	name, query, _ := strings.Cut(rest, "?")
	in, ok := c.Lookup(name)
	if !ok {
		return State{}, linkErr("unknown scenario %q", clip(name))
	}
	st := c.Defaults(name)
	// Each part is read on its own: a refused one is noted and left at
	// its default, the rest still apply.
	var problems []string
	bad := &LinkError{Kept: true, Params: map[string]string{}, Values: map[string]string{}}
	refuse := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	seen := map[string]bool{}
	for _, pair := range strings.Split(query, "&") {
		if pair == "" {
			continue
		}
		k, v, hasEq := strings.Cut(pair, "=")
		key, err := url.QueryUnescape(k)
		if err != nil || (!hasEq && !linkFlags[key]) {
			refuse("the link is damaged near %q", clip(pair))
			continue
		}
		val, err := url.QueryUnescape(v)
		if err != nil {
			refuse("the link is damaged near %q", clip(pair))
			continue
		}
		if seen[key] {
			refuse("%q is given twice (the first is used)", clip(key))
			continue
		}
		seen[key] = true
		switch {
		case linkFlags[key]:
			if hasEq && val != "1" && val != "0" {
				refuse("%s is a flag: write &%s (or %s=1)", key, key, key)
				continue
			}
			on := !hasEq || val == "1"
			if key == "present" {
				st.Present = on
			} else {
				st.Embed = on
			}
		case key == "text":
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 || n > MaxTextSize {
				refuse("text size %q is not one of 1, 2, 3", clip(val))
				continue
			}
			st.TextSize = n
		case key == "seed":
			n, err := strconv.ParseUint(val, 10, 64)
			if err != nil {
				refuse("seed %q is not a whole number between 0 and %d", clip(val), uint64(1<<64-1))
				continue
			}
			st.Seed = n
		case key == "v":
			vs, err := parseVariants(in, val)
			if err != nil {
				refuse("%v", err)
				continue
			}
			st.Variants = vs
		case key == "x":
			x, err := ParseSpeed(val)
			if err != nil {
				refuse("%v", err)
				continue
			}
			st.Speed = x
		case key == "t":
			t, err := ParseSeconds(val)
			if err != nil {
				refuse("time %q: %v", clip(val), err)
				continue
			}
			st.Time = t
		case strings.Contains(key, "."):
			k, err := checkKnob(in, key, val)
			if err != nil {
				refuse("%v", err)
				continue
			}
			if seen[k.Name] && k.Name != key {
				refuse("%q is given twice (the first is used)", clip(k.Name))
				continue
			}
			seen[k.Name] = true
			st.Knobs = append(st.Knobs, k)
		default:
			p, ok := in.Param(key)
			if !ok {
				refuse("scenario %s has no parameter %q", in.ID, clip(key))
				continue
			}
			if _, err := p.Check(val); err != nil {
				msg := clipMessage(err.Error())
				bad.Params[p.Name], bad.Values[p.Name] = msg, clip(val)
				refuse("%s: %s", p.Name, msg)
				continue
			}
			st.Params[p.Name] = val
		}
	}
	if len(problems) > 0 {
		bad.Reason = strings.Join(problems, "; ")
		return st, bad
	}
	return st, nil
}

// checkKnob validates a knob as `pagesim run --set` does.
func checkKnob(in *scenario.Spec, name, value string) (scenario.Knob, error) {
	if !validKnobName(name) {
		return scenario.Knob{}, linkErr("%q is not a kernel knob name", clip(name))
	}
	k, err := scenario.CheckKnob(name, value)
	if err != nil {
		msg := err.Error()
		if !strings.HasPrefix(msg, name+":") {
			msg = name + ": " + msg
		}
		return scenario.Knob{}, linkErr("%s", clipMessage(msg))
	}
	return k, nil
}

// validKnobName reports whether s looks like a knob path: 3-100
// characters of letters, digits, '_', '-' and '.', with a dot (mTHP's
// knobs have capitals: hugepages-64kB).
func validKnobName(s string) bool {
	if len(s) < 3 || len(s) > 100 || !strings.Contains(s, ".") {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// parseVariants reads a comma-separated variant list and returns it in the
// scenario's order.
func parseVariants(in *scenario.Spec, s string) ([]string, error) {
	if s == "" {
		return nil, linkErr("no variant is selected")
	}
	want := map[string]bool{}
	for _, v := range strings.Split(s, ",") {
		if !in.HasVariant(v) {
			return nil, linkErr("scenario %s has no variant %q", in.ID, clip(v))
		}
		if want[v] {
			return nil, linkErr("variant %q is given twice", clip(v))
		}
		want[v] = true
	}
	var out []string
	for _, vi := range in.Variants {
		if want[vi.Name] {
			out = append(out, vi.Name)
		}
	}
	return out, nil
}

// clip shortens a piece of a link for an error message, as the command
// line shortens a value it quotes.
var clip = scenario.ClipValue

// clipMessage shortens an error message that may quote a long value.
func clipMessage(s string) string {
	r := []rune(s)
	if len(r) > 160 {
		return string(r[:160]) + "..."
	}
	return s
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// ParseSpeed reads one of Speeds ("10", "x10", "0.25").
func ParseSpeed(s string) (float64, error) {
	x, err := strconv.ParseFloat(strings.TrimPrefix(s, "x"), 64)
	if err == nil {
		for _, v := range Speeds {
			if v == x {
				return v, nil
			}
		}
	}
	return 0, fmt.Errorf("speed %q is not one of %s", clip(s), speedList())
}

// NextSpeed returns the speed after x in Speeds (faster) or before it;
// the fastest and the slowest stay.
func NextSpeed(x float64, faster bool) float64 {
	i := 0
	for i < len(Speeds)-1 && Speeds[i] < x {
		i++
	}
	if faster {
		return Speeds[min(i+1, len(Speeds)-1)]
	}
	return Speeds[max(i-1, 0)]
}

func speedList() string {
	var s []string
	for _, v := range Speeds {
		s = append(s, formatSpeed(v))
	}
	return strings.Join(s, ", ")
}

func formatSpeed(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// FormatSpeed prints a speed as the panel shows it ("x0.25").
func FormatSpeed(x float64) string { return "x" + formatSpeed(x) }

// FormatTime prints a simulated time as the page shows it everywhere (the
// status line, the canvas, the partial table's header): seconds with
// three decimals, rounded up to the millisecond. The page's clock stops
// on whole milliseconds and a run that ends between two stops at the next
// one, which is the time a link carries: the shown t and the link's t are
// the same number.
func FormatTime(t sim.Time) string {
	if t < 0 {
		return "-" + FormatTime(-t)
	}
	ms := int64((t + sim.Millisecond - 1) / sim.Millisecond)
	return fmt.Sprintf("%d.%03d", ms/1000, ms%1000)
}

// FormatSeconds prints t in seconds with as many decimals as it needs
// ("0", "2.5", "0.000001").
func FormatSeconds(t sim.Time) string {
	neg := t < 0
	if neg {
		t = -t
	}
	s := strconv.FormatInt(int64(t/sim.Second), 10)
	if frac := int64(t % sim.Second); frac != 0 {
		f := strings.TrimRight(fmt.Sprintf("%09d", frac), "0")
		s += "." + f
	}
	if neg {
		s = "-" + s
	}
	return s
}

// ParseSeconds reads a non-negative decimal number of seconds with at
// most 9 decimals, exactly (no floating point), up to MaxLinkTime.
func ParseSeconds(s string) (sim.Time, error) {
	whole, frac, dot := strings.Cut(s, ".")
	if !allDigits(whole) || (dot && !allDigits(frac)) || len(frac) > 9 {
		return 0, errors.New("not a number of seconds like 2.5")
	}
	// A number too long to read is over MaxLinkTime, and says so
	// (review finding F43: "99999999" was "not a number").
	if len(whole) > 6 {
		return 0, fmt.Errorf("more than %s seconds", FormatSeconds(MaxLinkTime))
	}
	w, _ := strconv.ParseInt(whole, 10, 64)
	var f int64
	if frac != "" {
		f, _ = strconv.ParseInt(frac+strings.Repeat("0", 9-len(frac)), 10, 64)
	}
	t := sim.Time(w)*sim.Second + sim.Time(f)
	if t > MaxLinkTime {
		return 0, fmt.Errorf("more than %s seconds", FormatSeconds(MaxLinkTime))
	}
	return t, nil
}
