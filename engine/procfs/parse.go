package procfs

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ParseError is a malformed or unsupported input, located by file and line
// ("pagetypeinfo:12: unknown migratetype \"Reserve\"").
type ParseError struct {
	File string // "buddyinfo", "zoneinfo", "sys_vm/min_free_kbytes", ...
	Line int    // 1-based; 0 when the problem is the whole file
	Msg  string
}

func (e *ParseError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

func errorf(file string, line int, format string, args ...any) error {
	return &ParseError{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// maxLine bounds one input line; /proc lines are short, and the bound keeps a
// hostile input from growing the scanner's buffer without limit.
const maxLine = 1 << 20

// scanLines calls f with each line (without its newline) and its 1-based
// number. It stops at the first error.
func scanLines(file string, r io.Reader, f func(no int, line string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	no := 0
	for sc.Scan() {
		no++
		if err := f(no, sc.Text()); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return errorf(file, no+1, "line longer than %d bytes", maxLine)
		}
		return errorf(file, no+1, "read error: %v", err)
	}
	return nil
}

func parseU64(file string, no int, what, s string) (uint64, error) {
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, errorf(file, no, "%s %q is not a non-negative integer", what, s)
	}
	return v, nil
}

func parseI64(file string, no int, what, s string) (int64, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, errorf(file, no, "%s %q is not an integer", what, s)
	}
	return v, nil
}

// parseNodeZone reads the "Node N, zone NAME" prefix shared by every file:
// fields[0] = "Node", fields[1] = "N,", fields[2] = "zone", fields[3] = NAME
// (with a trailing comma in pagetypeinfo's free table).
func parseNodeZone(file string, no int, fields []string, nameComma bool) (node int, zone string, err error) {
	if len(fields) < 4 || fields[0] != "Node" || fields[2] != "zone" || !strings.HasSuffix(fields[1], ",") {
		return 0, "", errorf(file, no, "expected \"Node N, zone NAME\"")
	}
	n, err := strconv.ParseUint(strings.TrimSuffix(fields[1], ","), 10, 16)
	if err != nil {
		return 0, "", errorf(file, no, "node %q is not a node number", strings.TrimSuffix(fields[1], ","))
	}
	zone = fields[3]
	if nameComma {
		if !strings.HasSuffix(zone, ",") {
			return 0, "", errorf(file, no, "expected \"zone NAME, type TYPE\"")
		}
		zone = strings.TrimSuffix(zone, ",")
	}
	if zone == "" {
		return 0, "", errorf(file, no, "empty zone name")
	}
	return int(n), zone, nil
}

// ---------------------------------------------------------------------------
// /proc/buddyinfo

// BuddyinfoZone is one line of /proc/buddyinfo: a populated zone's free
// chunk counts per order (free_area[order].nr_free).
type BuddyinfoZone struct {
	Line   int
	Node   int
	Zone   string
	NrFree []uint64 // indexed by order
}

// ParseBuddyinfo reads /proc/buddyinfo.
func ParseBuddyinfo(r io.Reader) ([]BuddyinfoZone, error) {
	const file = "buddyinfo"
	var out []BuddyinfoZone
	err := scanLines(file, r, func(no int, line string) error {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			return nil
		}
		node, zone, err := parseNodeZone(file, no, fields, false)
		if err != nil {
			return err
		}
		counts := fields[4:]
		if len(counts) == 0 {
			return errorf(file, no, "zone %s has no free counts", zone)
		}
		z := BuddyinfoZone{Line: no, Node: node, Zone: zone, NrFree: make([]uint64, len(counts))}
		for i, c := range counts {
			if z.NrFree[i], err = parseU64(file, no, fmt.Sprintf("order-%d count", i), c); err != nil {
				return err
			}
		}
		out = append(out, z)
		return nil
	})
	return out, err
}

// ---------------------------------------------------------------------------
// /proc/pagetypeinfo

// PagetypeinfoFree is one row of pagetypeinfo's free table: the free chunks
// per order on one migratetype's lists of a zone.
type PagetypeinfoFree struct {
	Line   int
	Node   int
	Zone   string
	Type   string   // migratetype_names[] spelling, as printed
	Counts []uint64 // indexed by order
	// Capped marks counts printed as ">100000": the kernel stopped
	// walking the list there, so the real count is at least Counts[o].
	Capped []bool
}

// PagetypeinfoBlocks is one row of a block-count table ("Number of blocks
// type" or, with CONFIG_PAGE_OWNER, "Number of mixed blocks").
type PagetypeinfoBlocks struct {
	Line      int
	Node      int
	Zone      string
	Types     []string // the column names of the table's header
	TypesLine int      // the header's line
	Counts    []uint64 // indexed like Types
}

// PagetypeinfoData is a parsed /proc/pagetypeinfo.
type PagetypeinfoData struct {
	// PageblockOrder and PagesPerBlock are the header values; a file
	// with one header block per node must repeat the same values.
	PageblockOrder     int
	PageblockOrderLine int // 0 when the header is missing
	PagesPerBlock      uint64
	PagesPerBlockLine  int // 0 when the header is missing
	Free               []PagetypeinfoFree
	Blocks             []PagetypeinfoBlocks
	Mixed              []PagetypeinfoBlocks
}

// ParsePagetypeinfo reads /proc/pagetypeinfo.
func ParsePagetypeinfo(r io.Reader) (*PagetypeinfoData, error) {
	const file = "pagetypeinfo"
	p := &PagetypeinfoData{PageblockOrder: -1}
	const (
		secNone = iota
		secFree
		secBlocks
		secMixed
	)
	sec := secNone
	var types []string
	typesLine := 0
	nrOrders := -1
	err := scanLines(file, r, func(no int, line string) error {
		trim := strings.TrimSpace(line)
		if trim == "" {
			return nil
		}
		fields := strings.Fields(trim)
		switch {
		case strings.HasPrefix(trim, "Page block order:"):
			v, err := parseU64(file, no, "page block order", strings.TrimSpace(strings.TrimPrefix(trim, "Page block order:")))
			if err != nil {
				return err
			}
			if v > 64 {
				return errorf(file, no, "page block order %d is out of range", v)
			}
			if p.PageblockOrderLine != 0 && int(v) != p.PageblockOrder {
				return errorf(file, no, "page block order %d differs from %d on line %d", v, p.PageblockOrder, p.PageblockOrderLine)
			}
			if p.PagesPerBlockLine != 0 && p.PagesPerBlock != 1<<v {
				return errorf(file, no, "page block order %d does not match %d pages per block on line %d", v, p.PagesPerBlock, p.PagesPerBlockLine)
			}
			p.PageblockOrder, p.PageblockOrderLine = int(v), no
			sec = secNone
			return nil
		case strings.HasPrefix(trim, "Pages per block:"):
			v, err := parseU64(file, no, "pages per block", strings.TrimSpace(strings.TrimPrefix(trim, "Pages per block:")))
			if err != nil {
				return err
			}
			if p.PagesPerBlockLine != 0 && v != p.PagesPerBlock {
				return errorf(file, no, "pages per block %d differs from %d on line %d", v, p.PagesPerBlock, p.PagesPerBlockLine)
			}
			if p.PageblockOrderLine != 0 && v != 1<<p.PageblockOrder {
				return errorf(file, no, "pages per block %d does not match page block order %d on line %d (2^%d = %d)", v, p.PageblockOrder, p.PageblockOrderLine, p.PageblockOrder, uint64(1)<<p.PageblockOrder)
			}
			p.PagesPerBlock, p.PagesPerBlockLine = v, no
			sec = secNone
			return nil
		case strings.HasPrefix(trim, "Free pages count per migrate type at order"):
			orders := strings.Fields(strings.TrimPrefix(trim, "Free pages count per migrate type at order"))
			if len(orders) == 0 {
				return errorf(file, no, "free table header lists no orders")
			}
			for i, o := range orders {
				if o != strconv.Itoa(i) {
					return errorf(file, no, "free table header: order column %d is %q", i, o)
				}
			}
			nrOrders = len(orders)
			sec = secFree
			return nil
		case strings.HasPrefix(trim, "Number of blocks type"), strings.HasPrefix(trim, "Number of mixed blocks"):
			if strings.HasPrefix(trim, "Number of blocks type") {
				sec = secBlocks
				types = strings.Fields(strings.TrimPrefix(trim, "Number of blocks type"))
			} else {
				sec = secMixed
				types = strings.Fields(strings.TrimPrefix(trim, "Number of mixed blocks"))
			}
			if len(types) == 0 {
				return errorf(file, no, "block table header lists no migratetypes")
			}
			typesLine = no
			return nil
		}
		switch sec {
		case secFree:
			if len(fields) < 6 || fields[4] != "type" {
				return errorf(file, no, "expected \"Node N, zone NAME, type TYPE counts...\"")
			}
			node, zone, err := parseNodeZone(file, no, fields, true)
			if err != nil {
				return err
			}
			row := PagetypeinfoFree{Line: no, Node: node, Zone: zone, Type: fields[5]}
			counts := fields[6:]
			if len(counts) != nrOrders {
				return errorf(file, no, "%d free counts, the header has %d orders", len(counts), nrOrders)
			}
			row.Counts = make([]uint64, len(counts))
			row.Capped = make([]bool, len(counts))
			for i, c := range counts {
				if strings.HasPrefix(c, ">") {
					row.Capped[i] = true
					c = c[1:]
				}
				if row.Counts[i], err = parseU64(file, no, fmt.Sprintf("order-%d count", i), c); err != nil {
					return err
				}
			}
			p.Free = append(p.Free, row)
		case secBlocks, secMixed:
			node, zone, err := parseNodeZone(file, no, fields, false)
			if err != nil {
				return err
			}
			counts := fields[4:]
			if len(counts) != len(types) {
				return errorf(file, no, "%d block counts, the header on line %d has %d migratetypes", len(counts), typesLine, len(types))
			}
			row := PagetypeinfoBlocks{Line: no, Node: node, Zone: zone, Types: types, TypesLine: typesLine, Counts: make([]uint64, len(counts))}
			for i, c := range counts {
				if row.Counts[i], err = parseU64(file, no, types[i]+" block count", c); err != nil {
					return err
				}
			}
			if sec == secBlocks {
				p.Blocks = append(p.Blocks, row)
			} else {
				p.Mixed = append(p.Mixed, row)
			}
		default:
			return errorf(file, no, "unexpected line %q", clip(trim))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// clip shortens a line quoted in an error.
func clip(s string) string {
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}

// ---------------------------------------------------------------------------
// /proc/zoneinfo

// Stat is one "name value" line.
type Stat struct {
	Name  string
	Value uint64
}

// Pageset is one CPU's "cpu: N" block of a zone's pagesets.
type Pageset struct {
	CPU              int
	Count, High      int64
	Batch            int64
	HighMin, HighMax int64
	HasHighMinMax    bool // high_min/high_max lines (6.7+)
	StatThreshold    int64
	HasStatThreshold bool
}

// ZoneinfoZone is one zone of /proc/zoneinfo. Fields a kernel did not print
// are zero with their Has flag false.
type ZoneinfoZone struct {
	Line int // the "Node N, zone NAME" line
	Node int
	Zone string

	// NodeStats are the "per-node stats" printed on the node's first
	// populated zone (4.8+), in file order.
	NodeStats []Stat

	Free                      uint64
	HasFree                   bool
	Boost                     uint64
	HasBoost                  bool
	Min, Low, High            uint64
	Promo                     uint64
	HasPromo                  bool
	Spanned, Present, Managed uint64
	HasSpanned                bool
	HasPresent                bool
	HasManaged                bool
	CMA                       uint64
	HasCMA                    bool
	Protection                []int64
	Stats                     []Stat // zone and NUMA items, in file order
	Pagesets                  []Pageset
	Unreclaimable             uint64 // node_unreclaimable or all_unreclaimable
	StartPFN                  uint64
	HasStartPFN               bool
	ReservedHighatomic        uint64
	FreeHighatomic            uint64
	HasReservedHighatomic     bool
	Other                     []Stat // lines kept but not interpreted (scanned, inactive_ratio, ...)
}

// Stat returns a zone item by name.
func (z *ZoneinfoZone) Stat(name string) (uint64, bool) {
	for _, s := range z.Stats {
		if s.Name == name {
			return s.Value, true
		}
	}
	return 0, false
}

// ParseZoneinfo reads /proc/zoneinfo.
func ParseZoneinfo(r io.Reader) ([]ZoneinfoZone, error) {
	const file = "zoneinfo"
	var out []ZoneinfoZone
	var z *ZoneinfoZone
	const (
		modeHead = iota // after "Node N, zone NAME"
		modeNode        // inside "per-node stats"
		modeZone        // after "pages free"
		modePagesets
	)
	mode := modeHead
	var ps *Pageset
	err := scanLines(file, r, func(no int, line string) error {
		trim := strings.TrimSpace(line)
		if trim == "" {
			return nil
		}
		fields := strings.Fields(trim)
		if fields[0] == "Node" {
			node, zone, err := parseNodeZone(file, no, fields, false)
			if err != nil {
				return err
			}
			if len(fields) != 4 {
				return errorf(file, no, "unexpected text after the zone name")
			}
			out = append(out, ZoneinfoZone{Line: no, Node: node, Zone: zone})
			z = &out[len(out)-1]
			mode, ps = modeHead, nil
			return nil
		}
		if z == nil {
			return errorf(file, no, "expected a \"Node N, zone NAME\" line first")
		}
		// "key: value" lines.
		if key, val, ok := strings.Cut(trim, ":"); ok {
			key = strings.TrimSpace(key)
			val = strings.TrimSpace(val)
			switch key {
			case "protection":
				if !strings.HasPrefix(val, "(") || !strings.HasSuffix(val, ")") {
					return errorf(file, no, "protection %q is not a parenthesised list", clip(val))
				}
				z.Protection = z.Protection[:0]
				for _, f := range strings.Split(val[1:len(val)-1], ",") {
					v, err := parseI64(file, no, "protection", strings.TrimSpace(f))
					if err != nil {
						return err
					}
					z.Protection = append(z.Protection, v)
				}
				return nil
			case "cpu":
				if mode != modePagesets {
					return errorf(file, no, "\"cpu:\" outside pagesets")
				}
				v, err := parseU64(file, no, "cpu", val)
				if err != nil {
					return err
				}
				if v > 1<<20 {
					return errorf(file, no, "cpu %d is out of range", v)
				}
				z.Pagesets = append(z.Pagesets, Pageset{CPU: int(v)})
				ps = &z.Pagesets[len(z.Pagesets)-1]
				return nil
			case "count", "high", "batch", "high_min", "high_max", "vm stats threshold":
				if mode != modePagesets || ps == nil {
					return errorf(file, no, "%q outside a pageset", key)
				}
				v, err := parseI64(file, no, key, val)
				if err != nil {
					return err
				}
				switch key {
				case "count":
					ps.Count = v
				case "high":
					ps.High = v
				case "batch":
					ps.Batch = v
				case "high_min":
					ps.HighMin, ps.HasHighMinMax = v, true
				case "high_max":
					ps.HighMax, ps.HasHighMinMax = v, true
				default:
					ps.StatThreshold, ps.HasStatThreshold = v, true
				}
				return nil
			case "all_unreclaimable", "node_unreclaimable", "start_pfn", "reserved_highatomic", "free_highatomic",
				"inactive_ratio", "node_inactive_ratio":
				v, err := parseU64(file, no, key, val)
				if err != nil {
					return err
				}
				switch key {
				case "all_unreclaimable", "node_unreclaimable":
					z.Unreclaimable = v
				case "start_pfn":
					z.StartPFN, z.HasStartPFN = v, true
				case "reserved_highatomic":
					z.ReservedHighatomic, z.HasReservedHighatomic = v, true
				case "free_highatomic":
					z.FreeHighatomic = v
				default:
					z.Other = append(z.Other, Stat{Name: key, Value: v})
				}
				mode, ps = modeZone, nil
				return nil
			}
			return errorf(file, no, "unknown line %q", clip(trim))
		}
		switch {
		case trim == "per-node stats":
			if mode != modeHead {
				return errorf(file, no, "\"per-node stats\" after the zone's own lines")
			}
			mode = modeNode
			return nil
		case trim == "pagesets":
			if mode != modeZone {
				return errorf(file, no, "\"pagesets\" before \"pages free\"")
			}
			mode = modePagesets
			return nil
		case len(fields) == 3 && fields[0] == "pages" && fields[1] == "free":
			v, err := parseU64(file, no, "pages free", fields[2])
			if err != nil {
				return err
			}
			z.Free, z.HasFree = v, true
			mode = modeZone
			return nil
		}
		if len(fields) == 1 && (mode == modeNode || mode == modeZone) && isDigits(fields[0]) {
			// A counter whose name the kernel's table lacked: some
			// 4.x kernels printed an empty name ("%-12s" of "")
			// for an item vmstat_text[] missed.
			fields = []string{"", fields[0]}
		}
		if len(fields) != 2 {
			return errorf(file, no, "unknown line %q", clip(trim))
		}
		name := fields[0]
		if name != "" && !isStatName(name) {
			return errorf(file, no, "%q is not a counter name", clip(name))
		}
		v, err := parseU64(file, no, "counter "+name, fields[1])
		if err != nil {
			return err
		}
		switch mode {
		case modeNode:
			z.NodeStats = append(z.NodeStats, Stat{Name: name, Value: v})
			return nil
		case modeZone:
		default:
			return errorf(file, no, "%q outside a zone's counters", name)
		}
		switch name {
		case "boost":
			z.Boost, z.HasBoost = v, true
		case "min":
			z.Min = v
		case "low":
			z.Low = v
		case "high":
			z.High = v
		case "promo":
			z.Promo, z.HasPromo = v, true
		case "spanned":
			z.Spanned, z.HasSpanned = v, true
		case "present":
			z.Present, z.HasPresent = v, true
		case "managed":
			z.Managed, z.HasManaged = v, true
		case "cma":
			z.CMA, z.HasCMA = v, true
		case "scanned", "node_scanned":
			z.Other = append(z.Other, Stat{Name: name, Value: v})
		default:
			z.Stats = append(z.Stats, Stat{Name: name, Value: v})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i := range out {
		if !out[i].HasFree {
			return nil, errorf(file, out[i].Line, "node %d zone %s has no \"pages free\" line", out[i].Node, out[i].Zone)
		}
	}
	return out, nil
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// isStatName reports whether s looks like a kernel counter name.
func isStatName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// ---------------------------------------------------------------------------
// /proc/vmstat

// VmstatEntry is one line of /proc/vmstat.
type VmstatEntry struct {
	Line  int
	Name  string
	Value uint64
}

// ParseVmstat reads /proc/vmstat.
func ParseVmstat(r io.Reader) ([]VmstatEntry, error) {
	const file = "vmstat"
	var out []VmstatEntry
	err := scanLines(file, r, func(no int, line string) error {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			return nil
		}
		if len(fields) != 2 || !isStatName(fields[0]) {
			return errorf(file, no, "expected \"name value\", got %q", clip(strings.TrimSpace(line)))
		}
		v, err := parseU64(file, no, fields[0], fields[1])
		if err != nil {
			return err
		}
		out = append(out, VmstatEntry{Line: no, Name: fields[0], Value: v})
		return nil
	})
	return out, err
}

// VmstatValue returns the value of a name in parsed /proc/vmstat lines.
func VmstatValue(entries []VmstatEntry, name string) (uint64, bool) {
	for _, e := range entries {
		if e.Name == name {
			return e.Value, true
		}
	}
	return 0, false
}

// ---------------------------------------------------------------------------
// /proc/sys/vm/<name>

// ParseSysctl reads a /proc/sys/vm file: one integer, or several separated
// by blanks (vm.lowmem_reserve_ratio prints one per zone). name is the file's
// name (min_free_kbytes), used in errors as sys_vm/<name>.
func ParseSysctl(name string, r io.Reader) ([]int64, error) {
	file := "sys_vm/" + name
	data, err := io.ReadAll(io.LimitReader(r, maxLine+1))
	if err != nil {
		return nil, errorf(file, 0, "read error: %v", err)
	}
	if len(data) > maxLine {
		return nil, errorf(file, 1, "file longer than %d bytes", maxLine)
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) != 1 {
		return nil, errorf(file, 2, "expected one line, found %d", len(lines))
	}
	fields := strings.Fields(string(lines[0]))
	if len(fields) == 0 {
		return nil, errorf(file, 1, "empty")
	}
	out := make([]int64, len(fields))
	for i, f := range fields {
		if out[i], err = parseI64(file, 1, "value", f); err != nil {
			return nil, err
		}
	}
	return out, nil
}
