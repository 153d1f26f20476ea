package script

// parse.go turns script text into statements: the lexical grammar of
// docs/SCRIPT.md. A statement is one line (a line ending in a backslash
// continues on the next), its first word the command, then words and
// NAME=VALUE arguments separated by blanks. A '#' that starts a word starts
// a comment to the end of the line. A value with blanks, quotes or a leading
// '#' is written in double quotes, with \" and \\ as its only escapes.
//
// Parse only reads the text; check (commands.go) then validates every
// statement against the command table before anything runs, so a typo on
// the last line is reported before a long simulation starts.

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Arg is one word of a statement after the command: a positional word
// (Key == "") or a NAME=VALUE argument.
type Arg struct {
	Key   string
	Value string
}

// Stmt is one statement.
type Stmt struct {
	// Line is the line the statement starts on (1-based).
	Line int
	Cmd  string
	Args []Arg
}

// Error is a script error: what went wrong and on which line of which
// script. Internal marks a failure of the engine itself (a bug), not of the
// script.
type Error struct {
	File     string
	Line     int
	Msg      string
	Internal bool
	// Detail holds a longer explanation (an invariant dump), if any.
	Detail string
	// Err is the engine's error the message came from, if any (an
	// *mm.BudgetError, say), for errors.As.
	Err error
}

// Unwrap returns the engine's error behind e, if any.
func (e *Error) Unwrap() error { return e.Err }

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// maxLineBytes bounds one logical line; longer input is refused rather than
// held.
const maxLineBytes = 1 << 16

// isKeyByte reports whether c may appear in an argument name: sysctl and
// sysfs paths ("vm.defrag_mode", "transparent_hugepage/hugepages-64kB/
// enabled", "memory.low") and Go field names.
func isKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '.' || c == '-' || c == '/'
}

// splitKey returns the name of a NAME=VALUE word and whether the word is one.
func splitKey(word string) (string, string, bool) {
	i := strings.IndexByte(word, '=')
	if i <= 0 {
		return "", "", false
	}
	for j := 0; j < i; j++ {
		if !isKeyByte(word[j]) {
			return "", "", false
		}
	}
	return word[:i], word[i+1:], true
}

// isCommandName reports whether s can be a command: lower case letters,
// digits and underscores, starting with a letter.
func isCommandName(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// Parse reads a script. name is used only in error messages; firstLine is
// the line number of the first line of src (1 for a whole file).
func Parse(name string, firstLine int, src []byte) ([]Stmt, error) {
	if firstLine < 1 {
		firstLine = 1
	}
	var stmts []Stmt
	var cur []Arg
	curLine := 0
	errAt := func(line int, format string, args ...any) error {
		return &Error{File: name, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	// A UTF-8 byte-order mark, which some editors write, is not text.
	src = bytes.TrimPrefix(src, []byte("\uFEFF"))
	lines := strings.Split(string(src), "\n")
	for i, text := range lines {
		line := firstLine + i
		text = strings.TrimSuffix(text, "\r")
		if len(text) > maxLineBytes {
			return nil, errAt(line, "line is longer than %d bytes", maxLineBytes)
		}
		if !utf8.ValidString(text) {
			return nil, errAt(line, "line is not valid UTF-8")
		}
		words, cont, err := lexLine(text)
		if err != nil {
			return nil, errAt(line, "%s", err)
		}
		if curLine == 0 && len(words) > 0 {
			curLine = line
		}
		cur = append(cur, words...)
		if len(cur) > 4096 {
			return nil, errAt(curLine, "statement has more than 4096 words")
		}
		if cont && i < len(lines)-1 {
			if curLine == 0 {
				curLine = line
			}
			continue
		}
		if len(cur) == 0 {
			curLine = 0
			continue
		}
		first := cur[0]
		if first.Key != "" || !isCommandName(first.Value) {
			w := first.Value
			if first.Key != "" {
				w = first.Key + "=" + first.Value
			}
			return nil, errAt(curLine, "%q is not a command (a line starts with a command such as machine, fill or print)", w)
		}
		stmts = append(stmts, Stmt{Line: curLine, Cmd: first.Value, Args: cur[1:]})
		cur, curLine = nil, 0
	}
	return stmts, nil
}

// lexLine splits one physical line into words. cont reports a trailing
// backslash (the statement continues on the next line).
func lexLine(s string) (words []Arg, cont bool, err error) {
	i := 0
	for {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i >= len(s) || s[i] == '#' {
			return words, false, nil
		}
		if s[i] == '\\' && strings.TrimRight(s[i+1:], " \t") == "" {
			return words, true, nil
		}
		start := i
		for i < len(s) && s[i] != ' ' && s[i] != '\t' && s[i] != '"' {
			if c := s[i]; c < 0x20 || c == 0x7f {
				return nil, false, fmt.Errorf("control character %#02x", c)
			}
			i++
		}
		word := s[start:i]
		if i < len(s) && s[i] == '"' {
			// A quoted word, or NAME="quoted value".
			key := ""
			if word != "" {
				k, rest, ok := splitKey(word)
				if !ok || rest != "" {
					return nil, false, fmt.Errorf("unexpected quote in %q", s[start:])
				}
				key = k
			}
			val, n, err := unquote(s[i:])
			if err != nil {
				return nil, false, err
			}
			i += n
			if i < len(s) && s[i] != ' ' && s[i] != '\t' {
				return nil, false, fmt.Errorf("a closing quote must be followed by a blank")
			}
			words = append(words, Arg{Key: key, Value: val})
			continue
		}
		if strings.HasSuffix(word, `\`) && strings.TrimRight(s[i:], " \t") == "" {
			// "fill heap\" at the end of a line continues it too.
			word, cont = word[:len(word)-1], true
		}
		if k, v, ok := splitKey(word); ok {
			words = append(words, Arg{Key: k, Value: v})
		} else {
			words = append(words, Arg{Value: word})
		}
		if cont {
			return words, true, nil
		}
	}
}

// unquote reads a double-quoted string at the start of s and returns its
// value and the bytes it took.
func unquote(s string) (string, int, error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return b.String(), i + 1, nil
		case c == '\\':
			if i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
				b.WriteByte(s[i+1])
				i++
				continue
			}
			return "", 0, fmt.Errorf(`in quotes a backslash escapes only \" and \\`)
		case c < 0x20 && c != '\t' || c == 0x7f:
			return "", 0, fmt.Errorf("control character %#02x", c)
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, fmt.Errorf("unterminated quote")
}

// quoteIfNeeded returns v as it must be written to read back as v.
func quoteIfNeeded(v string, positional bool) string {
	need := v == "" || strings.ContainsAny(v, " \t\"\\") || strings.HasPrefix(v, "#")
	if positional && !need {
		_, _, isKV := splitKey(v)
		need = isKV
	}
	if !need {
		return v
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(v) + `"`
}

// String formats the statement so that Parse reads it back unchanged.
func (s Stmt) String() string {
	var b strings.Builder
	b.WriteString(s.Cmd)
	for _, a := range s.Args {
		b.WriteByte(' ')
		if a.Key != "" {
			b.WriteString(a.Key)
			b.WriteByte('=')
			b.WriteString(quoteIfNeeded(a.Value, false))
		} else {
			b.WriteString(quoteIfNeeded(a.Value, true))
		}
	}
	return b.String()
}

// Format writes statements one per line.
func Format(stmts []Stmt) string {
	var b strings.Builder
	for _, s := range stmts {
		b.WriteString(s.String())
		b.WriteByte('\n')
	}
	return b.String()
}
