package script

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// FuzzScript runs random well-formed scripts built from the command table
// on small machines, with the invariant check after every command: any
// script either runs or stops with an error of its own (a name that does
// not exist, memory that ran out), never with an internal error of the
// engine or a broken invariant. The fuzzer's bytes choose the commands and
// their arguments (scriptFrom); the seeds are a few short byte strings.
// Random scripts like these found the FileRead crash
// (testdata/filemap_read_reclaim).
func FuzzScript(f *testing.F) {
	for _, seed := range [][]byte{
		nil,
		[]byte("\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f"),
		[]byte("file read write alloc order=7 count=all"),
		bytes.Repeat([]byte{0x31, 0x7f, 0xc3}, 20),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		src := scriptFrom(data)
		in := New(Options{CheckEveryCommand: true, MaxBytes: 256 << 20})
		err := in.Exec(&bytes.Buffer{}, "fuzz", 1, []byte(src))
		var se *Error
		if errors.As(err, &se) && (se.Internal || strings.Contains(se.Msg, "invariant broken")) {
			t.Fatalf("%v\n%s\nthe script:\n%s", err, se.Detail, src)
		}
	})
}

func TestScriptFromIsDeterministicAndWellFormed(t *testing.T) {
	data := []byte("some fuzzer bytes that choose commands and their arguments")
	a, b := scriptFrom(data), scriptFrom(data)
	assert := func(cond bool, format string, args ...any) {
		t.Helper()
		if !cond {
			t.Fatalf(format, args...)
		}
	}
	assert(a == b, "two scripts from the same bytes differ")
	assert(strings.HasPrefix(a, "machine mem="), "the script starts with a machine: %q", a)
	stmts, err := Parse("gen", 1, []byte(a))
	assert(err == nil, "the generated script does not parse: %v\n%s", err, a)
	for i := range stmts {
		_, err := check(&stmts[i])
		assert(err == nil, "statement %d does not check: %v\n%s", i+1, err, a)
	}
}

// chooser reads choices from the fuzzer's bytes (0 once they run out).
type chooser struct {
	data []byte
	i    int
}

func (c *chooser) n(k int) int {
	if k <= 1 {
		return 0
	}
	if c.i >= len(c.data) {
		return 0
	}
	b := int(c.data[c.i])
	c.i++
	return b % k
}

func (c *chooser) pick(xs ...string) string { return xs[c.n(len(xs))] }

// value is a value for each argument type, small enough that a script runs in
// milliseconds: sizes up to 64M on machines of up to 256M, durations up to
// 20ms, task intervals of at least 100us.
func (c *chooser) value(p param) string {
	switch p.typ {
	case tName:
		return c.pick("a", "b", "c")
	case tCgroup:
		return c.pick("/", "g")
	case tSize:
		return c.pick("4K", "64K", "1M", "2M", "8M", "64M")
	case tCount:
		return c.pick("0", "1", "2", "16", "512")
	case tCountAll:
		return c.pick("1", "16", "512", "all")
	case tFraction:
		return c.pick("0.1", "0.5", "1")
	case tBool:
		return c.pick("on", "off")
	case tDuration:
		return c.pick("10us", "100us", "1ms", "20ms")
	case tHold:
		return c.pick("1ms", "20ms", "forever")
	case tGFP:
		return c.pick("GFP_KERNEL", "GFP_NOFS", "GFP_HIGHUSER_MOVABLE", "GFP_ATOMIC", "GFP_TRANSHUGE", "GFP_KERNEL|__GFP_NORETRY", "GFP_NOWAIT", "GFP_KERNEL|__GFP_NOFAIL")
	case tOrder:
		return fmt.Sprint(c.n(11))
	case tList:
		return c.pick("0", "0-1", "1")
	case tChoice:
		return c.pick(p.choices...)
	}
	return c.pick("x", "y")
}

// skipped are commands the generator leaves out: machine comes first and
// once, the free-form ones take their own words, help and echo print only,
// and run takes its own arguments below.
var skipped = map[string]bool{"machine": true, "sysctl": true, "thp": true, "patch": true, "kernel": true, "cost": true,
	"help": true, "echo": true, "run": true, "expect": true, "print": true, "invariants": true, "trace": true}

// Objects: the commands that create one of a kind, and those that name
// one (by their first positional word, or a task program's argument).
var (
	creates = map[string]string{"region": "region", "write": "file", "alloc": "alloc", "task": "task", "cgroup": "cgroup"}
	names   = map[string]string{"fill": "region", "fragment": "region", "pin": "region", "unpin": "region",
		"read": "file", "sync": "file", "unlink": "file", "free": "alloc"}
	argNames = map[string]string{"region": "region", "file": "file"}
)

// scriptFrom builds a script from the fuzzer's bytes: a small machine,
// then up to 12 statements of the command table with valid arguments,
// with short runs between them. A command that names an object names one
// the script made, making one first if there is none.
func scriptFrom(data []byte) string {
	c := &chooser{data: data}
	var b strings.Builder
	made := map[string][]string{}
	fresh := func(kind string) string {
		n := fmt.Sprintf("%s%d", kind[:1], len(made[kind])+1)
		made[kind] = append(made[kind], n)
		return n
	}
	var existing func(kind string) string
	existing = func(kind string) string {
		if len(made[kind]) == 0 {
			switch kind {
			case "region":
				fmt.Fprintf(&b, "region %s size=%s\n", fresh(kind), c.pick("1M", "8M", "64M"))
			case "file":
				fmt.Fprintf(&b, "file write %s size=%s\n", fresh(kind), c.pick("64K", "1M", "8M"))
			case "alloc":
				fmt.Fprintf(&b, "alloc %s gfp=%s order=%d count=%s\n", fresh(kind), c.value(param{typ: tGFP}), c.n(11), c.pick("1", "16", "all"))
			}
		}
		return made[kind][c.n(len(made[kind]))]
	}
	fmt.Fprintf(&b, "machine mem=%s layout=%s nodes=%d cpus=%d\n", c.pick("64M", "128M", "256M"), c.pick("simple", "x86"), 1+c.n(2), 1+c.n(2))
	var cmds []*command
	for _, cmd := range commands {
		if skipped[cmd.name] {
			continue
		}
		if len(cmd.subs) > 0 {
			cmds = append(cmds, cmd.subs...)
			continue
		}
		cmds = append(cmds, cmd)
	}
	for s, n := 0, 1+c.n(12); s < n; s++ {
		if c.n(4) == 0 {
			fmt.Fprintf(&b, "run %s\n", c.pick("100us", "1ms", "10ms", "20ms"))
			continue
		}
		cmd := cmds[c.n(len(cmds))]
		if cmd.parent != nil && cmd.parent.name == "slab" {
			// slab alloc and free name a cache; alloc takes size= or
			// slabs=, not both.
			if cmd.name == "alloc" || len(made["slab"]) == 0 {
				fmt.Fprintf(&b, "slab alloc %s size=%s\n", c.pick("s1", "s2"), c.pick("64K", "1M", "8M"))
				made["slab"] = []string{"s1"}
				continue
			}
		}
		var words []string
		if cmd.parent != nil {
			words = append(words, cmd.parent.name)
		}
		words = append(words, cmd.name)
		keys := cmd.keys
		for i, p := range cmd.pos {
			if !p.required && c.n(2) == 0 {
				break
			}
			switch {
			case cmd.keysFor != nil && i == 1:
				prog := programs[c.n(len(programs))]
				words = append(words, prog.name)
				keys = prog.args
			case i == 0 && creates[cmd.name] != "" && (cmd.name != "write" || cmd.parent != nil):
				words = append(words, fresh(creates[cmd.name]))
			case i == 0 && names[cmd.name] != "" && cmd.parent == nil == (cmd.name != "read" && cmd.name != "sync" && cmd.name != "unlink"):
				words = append(words, existing(names[cmd.name]))
			case cmd.name == "slab" || (cmd.parent != nil && cmd.parent.name == "slab"):
				words = append(words, existing("slab"))
			default:
				words = append(words, c.value(p))
			}
		}
		where := false // cpu=, cpus= and node= exclude each other
		for _, k := range keys {
			// Tasks always pause between steps: a task without
			// interval= keeps its CPU (the command would wait for it
			// forever, which onCPU refuses), and one failing in the slow
			// path back to back makes a slow input.
			if !k.required && k.name != "interval" && c.n(3) != 0 {
				continue
			}
			switch k.name {
			case "interval":
				words = append(words, "interval="+c.pick("10us", "100us", "1ms"))
			case "cpu", "cpus", "node", "nid":
				if k.name != "nid" && where {
					continue
				}
				where = where || k.name != "nid"
				words = append(words, k.name+"="+c.pick("0", "1"))
			case "cgroup":
				words = append(words, "cgroup=/")
			case "every":
				words = append(words, "every="+c.pick("2", "4", "16"))
			case "region", "file":
				if k.typ == tName {
					words = append(words, k.name+"="+existing(argNames[k.name]))
					continue
				}
				words = append(words, k.name+"="+c.value(k))
			default:
				words = append(words, k.name+"="+c.value(k))
			}
		}
		b.WriteString(strings.Join(words, " ") + "\n")
	}
	b.WriteString("run 20ms\n")
	return b.String()
}
