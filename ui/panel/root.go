// Package panel is the page's control panel: a Vugu component tree that
// shows the latest app.Snapshot and turns clicks into commands for the
// simulation's owner goroutine. The components compile natively, so their
// output is tested with Vugu's static renderer (root_test.go); the browser
// mount (mount_js.go) only adds the DOM renderer.
//
// Everything shown comes from a Snapshot, which never changes once
// published; the panel keeps only what the user is typing (drafts) and
// view choices (which variant's trace is shown).
package panel

//go:generate go tool vugugen -skip-go-mod -skip-main -s
//go:generate go fmt .

import (
	"fmt"
	"html"
	"strconv"
	"strings"

	"github.com/vugu/vugu"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/scenario"
	"github.com/pagesim/pagesim/ui/app"
)

// Backend is the simulation owner as the panel sees it; *app.Loop
// implements it.
type Backend interface {
	Snapshot() *app.Snapshot
	Do(func(*app.Controller))
	Updated() <-chan struct{}
}

// Host is what the panel needs from the browser.
type Host interface {
	// CopyText puts text on the clipboard and reports the outcome to
	// done, possibly later and on another goroutine.
	CopyText(text string, done func(error))
	// PageURL is the page's address without its fragment.
	PageURL() string
	// DownloadText offers text as a file of that name.
	DownloadText(name, text string) error
}

// Root is the panel's root component.
type Root struct {
	Backend Backend
	Host    Host
	// Snap is the snapshot being shown; the mount loop replaces it
	// under the EventEnv lock.
	Snap *app.Snapshot
	// Script runs the Script mode's scripts and ScriptHost gives it the
	// browser; without them (the static renderer's tests) the mode is
	// not shown.
	Script     *app.ScriptRunner
	ScriptHost ScriptHost

	drafts   map[string]string // parameter (or "seed") -> text typed, not yet in Snap
	draftErr map[string]string // parameter (or "seed") -> why the draft was refused
	traceIdx int
	// traceFilter picks the trace's lines; traceShown caches their text
	// for the snapshot, variant and filter it was made for.
	traceFilter app.TraceFilter
	traceShown  traceCache
	copyStatus  map[string]string // button id -> "Copied" or an error
	eventEnv    vugu.EventEnv
	// pendingPlay is the play state a click asked for, shown at once
	// until a snapshot newer than pendingSeq (which has applied the
	// click) arrives.
	pendingPlay *bool
	pendingSeq  uint64
}

// Init implements vugu's lifecycle: remember the EventEnv for callbacks
// that finish later (the clipboard).
func (c *Root) Init(ctx vugu.InitCtx) {
	c.eventEnv = ctx.EventEnv()
}

func (c *Root) snap() *app.Snapshot {
	if c.Snap == nil {
		c.Snap = c.Backend.Snapshot()
	}
	return c.Snap
}

func (c *Root) do(f func(*app.Controller)) {
	c.Backend.Do(f)
}

// Handlers. Each queues a command for the owner goroutine; the effect
// shows with the next snapshot.

func (c *Root) togglePlay() {
	want := !c.playing()
	c.pendingPlay, c.pendingSeq = &want, c.snap().Seq
	c.do(func(ctl *app.Controller) {
		if want {
			ctl.Play()
		} else {
			ctl.Pause()
		}
	})
}

// playing is the play state to show: the one just asked for, until the
// simulation has answered, else the snapshot's.
func (c *Root) playing() bool {
	s := c.snap()
	if c.pendingPlay != nil {
		if s.Seq <= c.pendingSeq {
			return *c.pendingPlay
		}
		c.pendingPlay = nil
	}
	return s.Playing
}
func (c *Root) step() { c.do(func(ctl *app.Controller) { ctl.Step() }) }

// present turns presentation mode on or off.
func (c *Root) present(on bool) { c.do(func(ctl *app.Controller) { ctl.SetPresent(on) }) }

func (c *Root) setTextSize(e vugu.DOMEvent) {
	n, err := strconv.Atoi(e.PropString("target", "value"))
	if err != nil {
		return
	}
	c.do(func(ctl *app.Controller) { _ = ctl.SetTextSize(n) })
}

// focus shows variant i alone on a narrow screen.
func (c *Root) focus(i int) { c.do(func(ctl *app.Controller) { ctl.SetFocus(i) }) }

// tabClass marks the focused variant's tab.
func (c *Root) tabClass(i int) string {
	if i == c.snap().Focus {
		return "tab on"
	}
	return "tab"
}

// rootClass names the panel's mode for the stylesheet.
func (c *Root) rootClass() string {
	st := c.snap().State
	switch {
	case st.Embed:
		return "panel-root embed-strip"
	case st.Present:
		return "panel-root present-bar"
	}
	return "panel-root"
}

func (c *Root) textSizes() []int { return []int{1, 2, 3} }

func (c *Root) textSize() int { return max(c.snap().State.TextSize, 1) }
func (c *Root) reset()        { c.do(func(ctl *app.Controller) { ctl.Reset() }) }
func (c *Root) dismiss()      { c.do(func(ctl *app.Controller) { ctl.DismissMessage() }) }

func (c *Root) pickScenario(e vugu.DOMEvent) {
	name := e.PropString("target", "value")
	c.drafts = nil
	c.draftErr = nil
	c.do(func(ctl *app.Controller) { _ = ctl.SelectScenario(name) })
}

func (c *Root) setSpeed(e vugu.DOMEvent) {
	x, err := app.ParseSpeed(e.PropString("target", "value"))
	if err != nil {
		return
	}
	c.do(func(ctl *app.Controller) { _ = ctl.SetSpeed(x) })
}

func (c *Root) toggleVariant(name string, e vugu.DOMEvent) {
	on := e.PropBool("target", "checked")
	c.do(func(ctl *app.Controller) { _ = ctl.SetVariant(name, on) })
}

func (c *Root) pickTrace(e vugu.DOMEvent) {
	i, err := strconv.Atoi(e.PropString("target", "value"))
	if err == nil {
		c.traceIdx = i
	}
}

func (c *Root) setDraft(name string, e vugu.DOMEvent) {
	if c.drafts == nil {
		c.drafts = map[string]string{}
	}
	c.drafts[name] = e.PropString("target", "value")
}

// commitParam validates the typed value with the scenario's own check
// (the same one the permalink decoder and `pagesim run` use) and sends it
// only if it passes.
func (c *Root) commitParam(name string, e vugu.DOMEvent) {
	v := strings.TrimSpace(e.PropString("target", "value"))
	c.setDraftValue(name, v)
	p, ok := c.snap().Spec.Param(name)
	if !ok {
		return
	}
	if _, err := p.Check(v); err != nil {
		c.setDraftErr(name, err.Error())
		return
	}
	c.setDraftErr(name, "")
	c.do(func(ctl *app.Controller) { _ = ctl.SetParam(name, v) })
}

func (c *Root) commitSeed(e vugu.DOMEvent) {
	v := strings.TrimSpace(e.PropString("target", "value"))
	c.setDraftValue("seed", v)
	seed, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		c.setDraftErr("seed", "must be a whole number between 0 and 18446744073709551615")
		return
	}
	c.setDraftErr("seed", "")
	c.do(func(ctl *app.Controller) { ctl.SetSeed(seed) })
}

// knobsField is the draft key of the knobs box.
const knobsField = "knobs"

// commitKnobs reads one NAME=VALUE per line (blank lines and lines
// starting with # ignored), checks each as `pagesim run --set` does and
// sends the list only if all pass.
func (c *Root) commitKnobs(e vugu.DOMEvent) {
	text := e.PropString("target", "value")
	c.setDraftValue(knobsField, text)
	var knobs []scenario.Knob
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, value, ok := strings.Cut(line, "=")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok || name == "" {
			c.setDraftErr(knobsField, fmt.Sprintf("line %d: want NAME=VALUE", i+1))
			return
		}
		k, err := scenario.CheckKnob(name, value)
		if err != nil {
			c.setDraftErr(knobsField, fmt.Sprintf("line %d: %v", i+1, err))
			return
		}
		knobs = append(knobs, k)
	}
	c.setDraftErr(knobsField, "")
	c.setDraftValue(knobsField, formatKnobs(knobs))
	c.do(func(ctl *app.Controller) { _ = ctl.SetKnobs(knobs) })
}

func formatKnobs(knobs []scenario.Knob) string {
	var lines []string
	for _, k := range knobs {
		lines = append(lines, k.Name+"="+k.Value)
	}
	return strings.Join(lines, "\n")
}

func (c *Root) knobsText() string { return c.fieldText(knobsField, formatKnobs(c.snap().State.Knobs)) }

func (c *Root) setDraftValue(name, v string) {
	if c.drafts == nil {
		c.drafts = map[string]string{}
	}
	c.drafts[name] = v
}

func (c *Root) setDraftErr(name, msg string) {
	if c.draftErr == nil {
		c.draftErr = map[string]string{}
	}
	if msg == "" {
		delete(c.draftErr, name)
	} else {
		c.draftErr[name] = msg
	}
}

// fieldText is what an input shows: the draft while the user edits (or
// while a refused value stands), else the snapshot's value. A draft the
// snapshot has caught up with is dropped.
func (c *Root) fieldText(name, current string) string {
	d, ok := c.drafts[name]
	if !ok {
		return current
	}
	if d == current && c.draftErr[name] == "" {
		delete(c.drafts, name)
	}
	return d
}

// paramText is a parameter's field: what is being typed, else the value a
// link gave it that was refused, else the value in use.
func (c *Root) paramText(name string) string {
	cur := c.snap().State.Params[name]
	if _, typing := c.drafts[name]; !typing {
		if bad, ok := c.snap().BadValues[name]; ok {
			return bad
		}
	}
	return c.fieldText(name, cur)
}

func (c *Root) seedText() string {
	return c.fieldText("seed", strconv.FormatUint(c.snap().State.Seed, 10))
}

func (c *Root) fieldErr(name string) string {
	if e := c.draftErr[name]; e != "" {
		return e
	}
	return c.snap().ParamErrors[name]
}

func (c *Root) fieldClass(name string) string {
	if c.fieldErr(name) != "" {
		return "bad"
	}
	return ""
}

func (c *Root) copyResults() { c.copy("copy-results", c.snap().Result.Text) }
func (c *Root) copyJSON()    { c.copy("copy-json", c.snap().Result.JSON) }
func (c *Root) copyLink()    { c.copy("copy-link", c.linkURL()) }
func (c *Root) copyEmbed()   { c.copy("copy-embed", c.embedCode()) }

// pageURL is the page's address without a fragment ("" natively).
func (c *Root) pageURL() string {
	if c.Host == nil {
		return ""
	}
	return c.Host.PageURL()
}

// fullURL is the whole page's link to the state, for an embed's "open
// the full page".
func (c *Root) fullURL() string { return c.pageURL() + "#" + c.snap().FullLink }

// embedCode is the HTML that puts the state in an iframe of a slide or a
// blog post: 960x540, full screen allowed, no border.
func (c *Root) embedCode() string {
	title := "pagesim: " + c.snap().Spec.ID
	return `<iframe src="` + html.EscapeString(c.pageURL()+"#"+c.snap().EmbedLink) + `" width="960" height="540" title="` +
		html.EscapeString(title) + `" allow="fullscreen" loading="lazy" style="border:0"></iframe>`
}

func (c *Root) copy(id, text string) {
	if c.Host == nil {
		return
	}
	c.setCopyStatus(id, "")
	c.Host.CopyText(text, func(err error) {
		msg := "Copied."
		if err != nil {
			msg = "Could not copy (" + err.Error() + "); select the text and copy it by hand."
		}
		if c.eventEnv != nil {
			c.eventEnv.Lock()
			c.setCopyStatus(id, msg)
			c.eventEnv.UnlockRender()
		} else {
			c.setCopyStatus(id, msg)
		}
	})
}

func (c *Root) setCopyStatus(id, msg string) {
	if c.copyStatus == nil {
		c.copyStatus = map[string]string{}
	}
	c.copyStatus[id] = msg
}

// View helpers.

// linkURL is the whole link: the page's address and the permalink, as it
// is pasted into a mail.
func (c *Root) linkURL() string {
	base := ""
	if c.Host != nil {
		base = c.Host.PageURL()
	}
	return base + "#" + c.snap().Link
}

// linkNote says what the link holds, and warns when it is too long for
// a line of mail.
func (c *Root) linkNote() string {
	n := len(c.linkURL())
	if n > app.MaxShareLen {
		return fmt.Sprintf("This link is %d characters long: a mail's line holds at most %d, so some mail software may break it; the command line above runs the same.", n, app.MaxShareLen)
	}
	return "The whole state (scenario, variants, parameters, knobs, seed, time) is in the link: pasted into a plain-text mail, it opens the same run."
}

func (c *Root) playLabel() string {
	if c.playing() {
		return "Pause"
	}
	return "Play"
}

// statusLine is the one-line state of the clock. Its times are rounded
// as everywhere on the page (app.FormatTime): a paused t is the link's t.
func (c *Root) statusLine() string {
	s := c.snap()
	var b strings.Builder
	fmt.Fprintf(&b, "t = %s s", app.FormatTime(s.Shown))
	if s.Duration > 0 {
		fmt.Fprintf(&b, " of %s s", app.FormatTime(s.Duration))
	}
	switch {
	case s.RunError != "":
		b.WriteString(" · stopped")
	case s.Restoring:
		fmt.Fprintf(&b, " · restoring the link's state: %d%%", int(s.Progress*100))
	case s.Ended:
		b.WriteString(" · finished")
	case s.Playing:
		fmt.Fprintf(&b, " · playing at %s", app.FormatSpeed(s.State.Speed))
		if s.ActualSpeed > 0 && s.ActualSpeed < 0.9*s.State.Speed {
			fmt.Fprintf(&b, " (reaching x%.3g)", s.ActualSpeed)
		}
	default:
		b.WriteString(" · paused")
	}
	return b.String()
}

func speedValue(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

func (c *Root) stepTitle() string {
	return "Advance " + app.FormatSeconds(c.snap().StepSize) + " s of simulated time (one frame at this speed)"
}

// liveRows returns the live table: PSI, the latest sampled rates, the
// threads' states, then the vmstat counters; one row each, one column per
// variant.
func (c *Root) liveRows() [][]string {
	s := c.snap()
	if len(s.Live) == 0 {
		return nil
	}
	var rows [][]string
	row := func(name string, cell func(l app.VariantLive) string) {
		r := []string{name}
		for _, l := range s.Live {
			r = append(r, cell(l))
		}
		rows = append(rows, r)
	}
	row("PSI memory some avg10 (%)", func(l app.VariantLive) string { return strconv.FormatFloat(l.PSISome10, 'f', 2, 64) })
	for k, name := range s.Charts {
		row(name+" per s (last sample)", func(l app.VariantLive) string {
			if n := len(l.Samples); n > 0 && k < len(l.Samples[n-1].Rates) {
				return strconv.FormatFloat(l.Samples[n-1].Rates[k], 'f', 1, 64)
			}
			return "-"
		})
	}
	for n := range s.Live[0].Nodes {
		row(fmt.Sprintf("node %d kswapd / kcompactd", n), func(l app.VariantLive) string {
			if n >= len(l.Nodes) {
				return "-"
			}
			return l.Nodes[n].Kswapd + " / " + l.Nodes[n].Kcompactd
		})
	}
	for i, ctr := range s.Live[0].Vmstat {
		row := []string{ctr.Name}
		for _, l := range s.Live {
			if i < len(l.Vmstat) {
				row = append(row, strconv.FormatInt(l.Vmstat[i].Value, 10))
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// resultState says what the table holds.
func (c *Root) resultState() string {
	s := c.snap()
	switch {
	case len(s.Live) == 0:
		return ""
	case s.ResultFinal:
		return "Final: every variant has finished."
	case s.Restoring:
		return "Catching up with the link's time; the table fills in as the runs get there."
	case s.Playing:
		return "Running: the table fills in as the variants finish their steps (" + scenario.NotYet + " is still to come); the numbers are final when every variant has finished."
	case s.Shown == 0:
		return "Not started: press Play (or the space bar). The table fills in as the variants finish their steps."
	}
	return "Paused at t = " + app.FormatTime(s.Shown) + " s: the numbers measured so far (" + scenario.NotYet + " is still to come)."
}

// metricText prints a metric's value in the panel: whole numbers without
// decimals, others with two.
func metricText(v float64) string {
	if v == float64(int64(v)) {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// headlineRows are the scenario's headline metrics (Metric.Headline),
// one row each, one cell per variant: its value, or NotYet before the
// phase that measures it has run.
func (c *Root) headlineRows() [][]string {
	s := c.snap()
	var rows [][]string
	for _, m := range s.Metrics {
		if !m.Headline {
			continue
		}
		row := []string{m.Name}
		for _, l := range s.Live {
			if v, ok := l.Metrics[m.Name]; ok {
				row = append(row, metricText(v))
			} else {
				row = append(row, scenario.NotYet)
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// seedTable is one of the seed's published tables beside the run's
// numbers: a row per metric, per variant the seed's value and pagesim's.
type seedTable struct {
	Title, Scale string
	Head         []string
	Rows         [][]string
}

// decimals is how many decimals a seed's number has ("2.77 / 3.17": 2).
func decimals(v string) int {
	first, _, _ := strings.Cut(v, " ")
	if _, frac, ok := strings.Cut(first, "."); ok {
		return len(frac)
	}
	return 0
}

// seedTables returns the scenario's SeedResults with the run's numbers,
// printed to the seed's decimals; a variant not running says so, a
// metric not measured yet is NotYet.
func (c *Root) seedTables() []seedTable {
	s := c.snap()
	var out []seedTable
	for _, t := range s.Spec.SeedResults {
		st := seedTable{Title: t.Title, Scale: t.Scale, Head: []string{""}}
		if p, ok := s.Spec.Param("scale"); ok {
			st.Scale = strings.TrimSpace(st.Scale + " This run is at scale " + s.State.Params[p.Name] + ".")
		}
		live := map[string]app.VariantLive{}
		for _, l := range s.Live {
			live[l.Variant] = l
		}
		for _, v := range t.Variants {
			st.Head = append(st.Head, v+" seed", v+" pagesim")
		}
		for _, r := range t.Rows {
			row := []string{r.Label}
			for i, v := range t.Variants {
				row = append(row, r.Values[i])
				l, ok := live[v]
				switch {
				case !ok:
					row = append(row, "(not running)")
				default:
					if m, ok := l.Metrics[r.Metric]; ok {
						row = append(row, strconv.FormatFloat(m, 'f', decimals(r.Values[i]), 64))
					} else {
						row = append(row, scenario.NotYet)
					}
				}
			}
			st.Rows = append(st.Rows, row)
		}
		out = append(out, st)
	}
	return out
}

// stallText lays a slow-path trace out one decision per line, a flag
// bit the kernel prints in hex named beside it.
func stallText(trace string) string {
	if trace == "" {
		return "(no allocation has stalled yet)"
	}
	return app.NameGFPBits(strings.ReplaceAll(trace, " -> ", "\n  -> "))
}

// hasStatus reports whether any run says where it is.
func (c *Root) hasStatus() bool {
	for _, l := range c.snap().Live {
		if l.Status != "" {
			return true
		}
	}
	return false
}

func (c *Root) traceVariant() int {
	if c.traceIdx < 0 || c.traceIdx >= len(c.snap().Live) {
		return 0
	}
	return c.traceIdx
}

// TraceShown is how many of the latest matching trace lines the panel
// shows (all the kept ones are in the download).
const TraceShown = 500

// traceCache is the trace's text for one snapshot, variant and filter.
type traceCache struct {
	seq     uint64
	idx     int
	filter  app.TraceFilter
	text    string
	matched int
}

func (c *Root) traceLog() (app.VariantLive, bool) {
	s := c.snap()
	if len(s.Live) == 0 {
		return app.VariantLive{}, false
	}
	return s.Live[c.traceVariant()], true
}

// traceView formats the latest TraceShown lines that pass the filter,
// once per snapshot, variant and filter.
func (c *Root) traceView() traceCache {
	s := c.snap()
	l, ok := c.traceLog()
	if !ok {
		return traceCache{}
	}
	tc := &c.traceShown
	if tc.seq == s.Seq && tc.idx == c.traceVariant() && tc.filter == c.traceFilter && tc.text != "" {
		return *tc
	}
	idx, matched := l.Trace.Select(c.traceFilter, TraceShown)
	var b strings.Builder
	for _, i := range idx {
		b.WriteString(app.NameGFPBits(l.Trace.At(i).String()))
		b.WriteByte('\n')
	}
	text := strings.TrimSuffix(b.String(), "\n")
	if text == "" {
		text = "(no tracepoint events yet)"
		if l.Trace.Len() > 0 {
			text = "(no event passes the filter)"
		}
	}
	*tc = traceCache{seq: s.Seq, idx: c.traceVariant(), filter: c.traceFilter, text: text, matched: matched}
	return *tc
}

func (c *Root) traceText() string { return c.traceView().text }

func (c *Root) traceNote() string {
	l, ok := c.traceLog()
	if !ok {
		return ""
	}
	v := c.traceView()
	shown := min(v.matched, TraceShown)
	return fmt.Sprintf("%d events recorded, the latest %d kept (times on the page's clock); %d pass the filter, the latest %d shown. Download has every kept event that passes.",
		l.TraceWritten, l.Trace.Len(), v.matched, shown)
}

// traceEvents lists the tracepoints the filter offers.
func traceEvents() []string {
	var out []string
	for _, n := range mm.TraceNames() {
		_, name, _ := strings.Cut(n, ":")
		out = append(out, name)
	}
	return out
}

func (c *Root) pickTraceEvent(e vugu.DOMEvent) { c.traceFilter.Event = e.PropString("target", "value") }

func (c *Root) setTraceTask(e vugu.DOMEvent) {
	c.traceFilter.Task = strings.TrimSpace(e.PropString("target", "value"))
}

// downloadTrace saves the variant's kept events that pass the filter as
// the trace file.
func (c *Root) downloadTrace() {
	l, ok := c.traceLog()
	if !ok || c.Host == nil {
		return
	}
	cpus := 0
	for _, n := range l.Nodes {
		cpus += n.CPUs
	}
	name := "pagesim-" + c.snap().Spec.ID + "-" + l.Variant + "-trace.txt"
	if err := c.Host.DownloadText(name, l.Trace.File(c.traceFilter, cpus)); err != nil {
		c.setCopyStatus("download-trace", "Could not save the file: "+err.Error())
		return
	}
	c.setCopyStatus("download-trace", "Saved as "+name+".")
}

// chartLegend names the charts: PSI, then the scenario's key counters.
func (c *Root) chartLegend() []legendItem {
	out := []legendItem{{"swatch ch-psi", "psi10: PSI memory some avg10 (%)"}}
	for k, n := range c.snap().Charts {
		cls := "swatch ch-stall"
		if k == 1 {
			cls = "swatch ch-alloc"
		}
		out = append(out, legendItem{cls, n + ": per simulated second, its total so far in the label (the result table's number)"})
	}
	return out
}

// legendItem is one entry of the colour legend.
type legendItem struct{ Class, Text string }

func legendTypes() []legendItem {
	var out []legendItem
	for mt := mm.MigrateType(0); mt < mm.MIGRATE_TYPES; mt++ {
		out = append(out, legendItem{"swatch mt-" + strings.ToLower(mt.String()), mt.String()})
	}
	return out
}

// legendMarks explains the compaction markers and the threads' lamps
// (colours in static/style.css, checked against ui/mapview's palette).
var legendMarks = []legendItem{
	{"swatch mk-migrate", "migrate scanner"},
	{"swatch mk-free", "free scanner"},
	{"swatch mk-lastrun", "latest compaction stopped"},
	{"swatch lamp-on", "kswapd / kcompactd at work"},
	{"swatch lamp-half", "kswapd napping"},
}

var legendStates = []legendItem{
	{"swatch st-free", "free (dark)"},
	{"swatch st-pcp", "on a per-CPU list"},
	{"swatch mt-movable", "in use (bright)"},
	{"swatch st-pinned", "pinned"},
	{"swatch st-reserved", "reserved"},
}
