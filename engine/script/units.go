package script

// units.go reads and prints the quantities a script writes: sizes in bytes
// with the kernel's memparse suffixes, simulated durations, counts, on/off
// switches, node and CPU lists, and the numbers print and expect show.

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pagesim/pagesim/engine/sim"
)

// ParseSize reads a size in bytes: a whole number with an optional K, M, G
// or T suffix (powers of 1024, as memparse and the kernel command line
// read them), optionally followed by B or iB ("64M", "64MiB", "4096").
// Scripts and `pagesim proc --mem` read sizes with it.
func ParseSize(s string) (uint64, error) {
	bad := fmt.Errorf("%q is not a size (want a number with an optional K, M, G or T suffix)", s)
	t, needUnit := s, false
	switch {
	case strings.HasSuffix(t, "iB"):
		t, needUnit = t[:len(t)-2], true
	case strings.HasSuffix(t, "B"):
		t = t[:len(t)-1]
	}
	shift := 0
	if t != "" {
		switch t[len(t)-1] {
		case 'k', 'K':
			shift = 10
		case 'm', 'M':
			shift = 20
		case 'g', 'G':
			shift = 30
		case 't', 'T':
			shift = 40
		}
	}
	if shift > 0 {
		t = t[:len(t)-1]
	} else if needUnit {
		return 0, bad
	}
	if t == "" || strings.TrimLeft(t, "0123456789") != "" {
		return 0, bad
	}
	n, err := strconv.ParseUint(t, 10, 64)
	if err != nil || n > math.MaxUint64>>shift {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return n << shift, nil
}

// sizePages converts a size to 4 KiB pages, rounding up (a mapping or a
// file of 1 byte takes a page) without adding to bytes first: the largest
// sizes ParseSize reads would wrap around to no pages.
func sizePages(bytes uint64) uint64 { return bytes/4096 + min(bytes%4096, 1) }

// formatSize prints bytes the short way ParseSize reads: "64M", "4K", "3000".
func formatSize(b uint64) string {
	for _, u := range []struct {
		shift uint
		name  string
	}{{40, "T"}, {30, "G"}, {20, "M"}, {10, "K"}} {
		if b >= 1<<u.shift && b%(1<<u.shift) == 0 {
			return strconv.FormatUint(b>>u.shift, 10) + u.name
		}
	}
	return strconv.FormatUint(b, 10)
}

var durationUnits = []struct {
	name string
	unit sim.Time
}{
	{"ns", sim.Nanosecond}, {"us", sim.Microsecond}, {"ms", sim.Millisecond},
	{"s", sim.Second}, {"min", 60 * sim.Second}, {"h", 3600 * sim.Second},
}

// parseDuration reads a simulated duration: a number (decimals allowed)
// and a unit, ns, us, ms, s, min or h ("10s", "1.5ms", "250us").
func parseDuration(s string) (sim.Time, error) {
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i <= 0 {
		return 0, fmt.Errorf("%q is not a duration (want a number and a unit: ns, us, ms, s, min, h)", s)
	}
	num, unit := s[:i], s[i:]
	for _, u := range durationUnits {
		if u.name != unit {
			continue
		}
		if n, err := strconv.ParseInt(num, 10, 64); err == nil {
			if n > math.MaxInt64/int64(u.unit) {
				return 0, fmt.Errorf("duration %q is too long", s)
			}
			return sim.Time(n) * u.unit, nil
		}
		f, err := strconv.ParseFloat(num, 64)
		if err != nil {
			break
		}
		v := f * float64(u.unit)
		if v >= math.MaxInt64/2 {
			return 0, fmt.Errorf("duration %q is too long", s)
		}
		return sim.Time(math.Round(v)), nil
	}
	return 0, fmt.Errorf("%q is not a duration (want a number and a unit: ns, us, ms, s, min, h)", s)
}

// formatDuration prints a duration in the largest unit that keeps it whole.
func formatDuration(d sim.Time) string {
	if d == 0 {
		return "0s"
	}
	for i := len(durationUnits) - 1; i >= 0; i-- {
		u := durationUnits[i]
		if d%u.unit == 0 {
			return strconv.FormatInt(int64(d/u.unit), 10) + u.name
		}
	}
	return strconv.FormatInt(int64(d), 10) + "ns"
}

// parseBool reads an on/off switch.
func parseBool(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "on", "true", "yes", "1":
		return true, nil
	case "off", "false", "no", "0":
		return false, nil
	}
	return false, fmt.Errorf("%q is not on or off", s)
}

// parseUint reads a non-negative whole number.
func parseUint(s string) (uint64, error) {
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || s == "" || s[0] == '+' {
		return 0, fmt.Errorf("%q is not a non-negative whole number", s)
	}
	return n, nil
}

// parseList reads a list of small numbers such as "0,2-3" (cpulist format,
// as in /sys/devices/system/node/node0/cpulist), each below limit.
func parseList(s string, limit int) ([]int, error) {
	var out []int
	seen := map[int]bool{}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || a < 0 || b < a || lo == "" || lo[0] == '+' || (isRange && (hi == "" || hi[0] == '+')) {
			return nil, fmt.Errorf("%q is not a list such as 0,2-3", s)
		}
		if b >= limit {
			return nil, fmt.Errorf("%d in %q is out of range (0 to %d)", b, s, limit-1)
		}
		for i := a; i <= b; i++ {
			if !seen[i] {
				seen[i] = true
				out = append(out, i)
			}
		}
	}
	return out, nil
}

// parseNumber reads a plain number for expect ("12", "0.5", "-3").
func parseNumber(s string) (num, bool) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return intNum(n), true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || strings.ContainsAny(s, "xXpP_") {
		return num{}, false
	}
	return floatNum(f, 2), true
}

// num is a value print and expect show: a whole number, or a decimal
// printed with a fixed number of digits.
type num struct {
	i     int64
	f     float64
	prec  int // digits after the point; -1 for a whole number
	isInt bool
}

func intNum(i int64) num               { return num{i: i, f: float64(i), prec: -1, isInt: true} }
func uintNum(u uint64) num             { return intNum(int64(u)) }
func floatNum(f float64, prec int) num { return num{f: f, prec: prec} }

func (n num) String() string {
	if n.isInt {
		return strconv.FormatInt(n.i, 10)
	}
	return strconv.FormatFloat(n.f, 'f', n.prec, 64)
}

// compare returns -1, 0 or 1; whole numbers compare exactly.
func (n num) compare(o num) int {
	if n.isInt && o.isInt {
		switch {
		case n.i < o.i:
			return -1
		case n.i > o.i:
			return 1
		}
		return 0
	}
	switch {
	case n.f < o.f:
		return -1
	case n.f > o.f:
		return 1
	}
	return 0
}
