package script

// commands.go is the command table: every command with its syntax, its
// help, its positional words and its NAME=VALUE arguments with their types.
// check validates a statement against it before anything runs; help and
// docs/SCRIPT.md are written from it (a test keeps the two in step).

import (
	"fmt"
	"strings"

	"github.com/pagesim/pagesim/engine/mm"
)

// argType is the type of an argument's value.
type argType int

const (
	tText      argType = iota // anything
	tName                     // an object name
	tCgroup                   // a cgroup name, or / for the root
	tSize                     // 64M
	tCount                    // a whole number
	tCountAll                 // a whole number or "all"
	tFraction                 // a number in (0, 1]
	tBool                     // on/off
	tDuration                 // 10ms
	tHold                     // a duration or "forever"
	tGFP                      // a %pGg mask
	tOrder                    // 0..MAX_PAGE_ORDER
	tList                     // 0,2-3
	tChoice                   // one of choices
	tMempolicy                // MODE[:NODELIST], as tmpfs's mpol= takes it
)

// param describes a positional word or an argument.
type param struct {
	name     string
	typ      argType
	choices  []string
	required bool
	help     string
}

// command is one entry of the table.
type command struct {
	name   string
	syntax string
	help   string
	// pos are the positional words in order (subcommands consume the
	// first word before these). variadic lets the last repeat.
	pos      []param
	variadic bool
	keys     []param
	// subs are subcommands (file write, slab alloc, trace enable...).
	subs []*command
	// free marks commands whose words check validates itself.
	free bool
	// keysFor returns the arguments of a statement whose keys depend on a
	// positional word (task PROGRAM).
	keysFor func(pos []string) ([]param, error)
	// check is an extra static check.
	check     func(c *call) error
	run       func(in *Interp, c *call) error
	noMachine bool
	parent    *command
}

// call is a checked statement.
type call struct {
	st  *Stmt
	cmd *command // the leaf command (the subcommand, if any)
	pos []string
	kv  map[string]string
	// keys lists the arguments in the order written.
	keys []string
}

// name returns "file write" for a subcommand, else the command.
func (c *call) name() string {
	if c.cmd.parent != nil {
		return c.cmd.parent.name + " " + c.cmd.name
	}
	return c.cmd.name
}

func (c *call) has(k string) bool { _, ok := c.kv[k]; return ok }
func (c *call) str(k, def string) string {
	if v, ok := c.kv[k]; ok {
		return v
	}
	return def
}

// uint, size, flag and gfp are the typed getters: they read values check
// has already validated.
func (c *call) uint(k string) uint64 { n, _ := parseUint(c.kv[k]); return n }
func (c *call) size(k string) uint64 { n, _ := ParseSize(c.kv[k]); return n }
func (c *call) flag(k string) bool   { b, _ := parseBool(c.kv[k]); return b }
func (c *call) gfp(k string, def mm.GFP) mm.GFP {
	if !c.has(k) {
		return def
	}
	g, _ := mm.ParseGFP(c.kv[k])
	return g
}
func (c *call) order(k string, def mm.Order) mm.Order {
	if !c.has(k) {
		return def
	}
	return mm.Order(c.uint(k))
}
func (c *call) duration(k string) int64 { d, _ := parseDuration(c.kv[k]); return int64(d) }
func (c *call) fraction(k string) float64 {
	f, _ := parseNumber(c.kv[k])
	return f.f
}

// commands is the table, in the order help and the documentation list it.
var commands []*command

func init() {
	commands = append(commands, machineCommands()...)
	commands = append(commands, memoryCommands()...)
	commands = append(commands, runCommands()...)
	commands = append(commands, printCommands()...)
	for _, c := range commands {
		for _, s := range c.subs {
			s.parent = c
		}
	}
}

func lookupCommand(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

func commandNames() []string {
	var out []string
	for _, c := range commands {
		out = append(out, c.name)
	}
	return out
}

// Common arguments.
var (
	cpuParam  = param{name: "cpu", typ: tCount, help: "the CPU that does the work (default 0)"}
	nodeParam = param{name: "node", typ: tCount, help: "do the work on the first CPU of this node"}
	gfpParam  = param{name: "gfp", typ: tGFP, help: "the allocation mask, as %pGg prints it"}
	// gfpMapping is gfp= for page-cache I/O: the file's mapping mask.
	gfpMapping = param{name: "gfp", typ: tGFP, help: "the mapping's mask (default GFP_HIGHUSER_MOVABLE; writes add __GFP_WRITE)"}
	// slabCacheParams create a slab cache on its first use (slab alloc,
	// task ... slab); on an existing cache they must agree with it.
	slabCacheParams = []param{
		{name: "order", typ: tOrder, help: "the cache's slab order (oo), when it is created (default 0)"},
		{name: "reclaimable", typ: tBool, help: "SLAB_RECLAIM_ACCOUNT, when it is created"},
		{name: "cgroup", typ: tCgroup, help: "the cgroup charged, when it is created (default /)"},
	}
)

// sizeOrSlabs checks that a slab command says how much by exactly one of
// size= and slabs=.
func sizeOrSlabs(c *call) error {
	if c.has("size") == c.has("slabs") {
		return fmt.Errorf("give size= or slabs=")
	}
	return nil
}

// gfpDefault is gfpParam for a command whose mask defaults to def.
func gfpDefault(def string) param {
	p := gfpParam
	p.help += " (default " + def + ")"
	return p
}

// gfpRequired is gfpParam for a command that needs a mask.
func gfpRequired() param {
	p := gfpParam
	p.required = true
	return p
}

// check validates a statement and returns the call to run.
func check(st *Stmt) (*call, error) {
	cmd := lookupCommand(st.Cmd)
	if cmd == nil {
		msg := fmt.Sprintf("unknown command %q", st.Cmd)
		if s := suggest(st.Cmd, commandNames()); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		return nil, fmt.Errorf("%s", msg)
	}
	c := &call{st: st, cmd: cmd, kv: map[string]string{}}
	for _, a := range st.Args {
		if a.Key == "" {
			c.pos = append(c.pos, a.Value)
			continue
		}
		if _, dup := c.kv[a.Key]; dup {
			return nil, fmt.Errorf("%s: %s given twice", cmd.name, a.Key)
		}
		c.kv[a.Key] = a.Value
		c.keys = append(c.keys, a.Key)
	}
	if len(cmd.subs) > 0 {
		var names []string
		for _, s := range cmd.subs {
			names = append(names, s.name)
		}
		if len(c.pos) == 0 {
			return nil, fmt.Errorf("%s: want a subcommand: %s", cmd.name, strings.Join(names, ", "))
		}
		var sub *command
		for _, s := range cmd.subs {
			if s.name == c.pos[0] {
				sub = s
			}
		}
		if sub == nil {
			msg := fmt.Sprintf("%s: unknown subcommand %q (want %s)", cmd.name, c.pos[0], strings.Join(names, ", "))
			if s := suggest(c.pos[0], names); s != "" {
				msg = fmt.Sprintf("%s: unknown subcommand %q (did you mean %q?)", cmd.name, c.pos[0], s)
			}
			return nil, fmt.Errorf("%s", msg)
		}
		c.cmd, c.pos = sub, c.pos[1:]
	}
	if c.cmd.free {
		if c.cmd.check != nil {
			if err := c.cmd.check(c); err != nil {
				return nil, fmt.Errorf("%s: %v", c.name(), err)
			}
		}
		return c, nil
	}
	if err := checkArgs(c); err != nil {
		return nil, fmt.Errorf("%s: %v", c.name(), err)
	}
	return c, nil
}

func checkArgs(c *call) error {
	cmd := c.cmd
	nreq := 0
	for _, p := range cmd.pos {
		if p.required {
			nreq++
		}
	}
	if len(c.pos) < nreq {
		return fmt.Errorf("missing %s (usage: %s)", cmd.pos[len(c.pos)].name, cmd.syntax)
	}
	if len(c.pos) > len(cmd.pos) && !cmd.variadic {
		return fmt.Errorf("unexpected word %q (usage: %s)", c.pos[len(cmd.pos)], cmd.syntax)
	}
	for i, v := range c.pos {
		p := cmd.pos[min(i, len(cmd.pos)-1)]
		if err := checkValue(p, v); err != nil {
			return err
		}
	}
	keys := cmd.keys
	if cmd.keysFor != nil {
		more, err := cmd.keysFor(c.pos)
		if err != nil {
			return err
		}
		keys = append(append([]param(nil), keys...), more...)
	}
	for _, k := range c.keys {
		p := findParam(keys, k)
		if p == nil {
			var names []string
			for _, p := range keys {
				names = append(names, p.name)
			}
			if len(names) == 0 {
				return fmt.Errorf("takes no NAME=VALUE arguments, got %s=", k)
			}
			msg := fmt.Sprintf("unknown argument %q (want %s)", k, strings.Join(names, ", "))
			if s := suggest(k, names); s != "" {
				msg = fmt.Sprintf("unknown argument %q (did you mean %q?)", k, s)
			}
			return fmt.Errorf("%s", msg)
		}
		if err := checkValue(*p, c.kv[k]); err != nil {
			return fmt.Errorf("%s=%v", k, err)
		}
	}
	for _, p := range keys {
		if p.required && !c.has(p.name) {
			return fmt.Errorf("missing %s= (usage: %s)", p.name, cmd.syntax)
		}
	}
	if c.has("cpu") && c.has("node") {
		return fmt.Errorf("give cpu= or node=, not both")
	}
	if cmd.check != nil {
		return cmd.check(c)
	}
	return nil
}

func findParam(ps []param, name string) *param {
	for i := range ps {
		if ps[i].name == name {
			return &ps[i]
		}
	}
	return nil
}

// checkValue validates one value's syntax.
func checkValue(p param, v string) error {
	var err error
	switch p.typ {
	case tName:
		err = checkName(v)
	case tCgroup:
		if v != "/" {
			err = checkName(v)
		}
	case tSize:
		_, err = ParseSize(v)
	case tCount:
		_, err = parseUint(v)
	case tCountAll:
		if v != "all" {
			_, err = parseUint(v)
		}
	case tFraction:
		n, ok := parseNumber(v)
		if !ok || !(n.f > 0 && n.f <= 1) {
			err = fmt.Errorf("%q is not a fraction in (0, 1]", v)
		}
	case tBool:
		_, err = parseBool(v)
	case tDuration:
		_, err = parseDuration(v)
	case tHold:
		if v != "forever" {
			_, err = parseDuration(v)
		}
	case tGFP:
		_, err = mm.ParseGFP(v)
		if err == nil && strings.TrimSpace(v) == "" {
			err = fmt.Errorf("empty GFP mask")
		}
	case tOrder:
		n, e := parseUint(v)
		if e != nil || n > mm.MAX_PAGE_ORDER {
			err = fmt.Errorf("%q is not an order (0 to %d)", v, mm.MAX_PAGE_ORDER)
		}
	case tList:
		_, err = parseList(v, 1024)
	case tMempolicy:
		mode, list, hasList := strings.Cut(v, ":")
		if mode == "prefer" {
			mode = "preferred"
		}
		if _, err = mm.ParseMempolicyMode(mode); err == nil && hasList {
			_, err = parseList(list, 64)
		}
	case tChoice:
		found := false
		for _, ch := range p.choices {
			found = found || ch == v
		}
		if !found {
			err = fmt.Errorf("%q is not one of %s", v, strings.Join(p.choices, ", "))
		}
	}
	return err
}

// ---------------------------------------------------------------------------
// help

func helpCommand() *command {
	return &command{
		name:      "help",
		syntax:    "help [COMMAND]",
		help:      "Lists the commands, or describes one with its arguments.",
		pos:       []param{{name: "COMMAND", typ: tText}},
		noMachine: true,
		run: func(in *Interp, c *call) error {
			if len(c.pos) == 0 {
				for _, cmd := range commands {
					in.printf("%s\n", cmd.syntax)
					for _, s := range cmd.subs {
						in.printf("%s\n", s.syntax)
					}
				}
				return nil
			}
			cmd := lookupCommand(c.pos[0])
			if cmd == nil {
				return fmt.Errorf("unknown command %q", c.pos[0])
			}
			in.printf("%s", commandHelp(cmd))
			return nil
		},
	}
}

// commandHelp describes a command and its arguments.
func commandHelp(cmd *command) string {
	var b strings.Builder
	all := append([]*command{cmd}, cmd.subs...)
	for _, c := range all {
		if c.syntax != "" {
			fmt.Fprintf(&b, "%s\n", c.syntax)
		}
	}
	for _, c := range all {
		if c.help != "" {
			fmt.Fprintf(&b, "  %s\n", c.help)
		}
		for _, p := range c.keys {
			fmt.Fprintf(&b, "    %-12s %s\n", p.name+"=", p.help)
		}
	}
	if cmd.name == "task" {
		for _, p := range programs {
			fmt.Fprintf(&b, "  program %s: %s\n", p.name, p.help)
			for _, a := range p.args {
				fmt.Fprintf(&b, "    %-12s %s\n", a.name+"=", a.help)
			}
		}
	}
	return b.String()
}

// reference writes the command reference of docs/SCRIPT.md from the table.
func reference() string {
	var b strings.Builder
	for _, cmd := range commands {
		fmt.Fprintf(&b, "### %s\n\n", cmd.name)
		all := append([]*command{cmd}, cmd.subs...)
		for _, c := range all {
			if c.syntax == "" || (c == cmd && len(cmd.subs) > 0) {
				continue
			}
			fmt.Fprintf(&b, "    %s\n", c.syntax)
		}
		b.WriteString("\n")
		for _, c := range all {
			if c.help != "" {
				if c != cmd {
					fmt.Fprintf(&b, "`%s %s`: ", cmd.name, c.name)
				}
				fmt.Fprintf(&b, "%s\n\n", c.help)
			}
			writeParams(&b, c.keys)
		}
		if cmd.name == "task" {
			for _, p := range programs {
				fmt.Fprintf(&b, "Program `%s`: %s.\n\n", p.name, p.help)
				writeParams(&b, p.args)
			}
		}
	}
	return b.String()
}

func writeParams(b *strings.Builder, ps []param) {
	if len(ps) == 0 {
		return
	}
	b.WriteString("| argument | meaning |\n|---|---|\n")
	for _, p := range ps {
		req := ""
		if p.required {
			req = " (required)"
		}
		help := strings.ReplaceAll(p.help, "|", "\\|")
		fmt.Fprintf(b, "| `%s=` | %s%s |\n", p.name, help, req)
	}
	b.WriteString("\n")
}
