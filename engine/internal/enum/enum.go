// Package enum holds the one shape of the engine's enumerations: an integer
// type whose values index a table of names (the kernel's spelling, as
// migratetype_names[] or policy_modes[] has it), a String method that reads
// the table and a parser that searches it. Name is the bounds check every
// String method needs; Parse the inverse.
package enum

import (
	"fmt"
	"strings"
)

// Integer is what an enumeration's type is.
type Integer interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// Name returns names[v], or "Type(v)" for a value the table has no name for
// (Type is v's type without its package), so a String method never panics.
func Name[T Integer](names []string, v T) string {
	if v >= 0 && uint64(v) < uint64(len(names)) {
		return names[v]
	}
	t := fmt.Sprintf("%T", v)
	if i := strings.LastIndexByte(t, '.'); i >= 0 {
		t = t[i+1:]
	}
	return fmt.Sprintf("%s(%d)", t, v)
}

// Parse returns the value whose name is s, and whether there is one.
func Parse[T Integer](names []string, s string) (T, bool) {
	for i, n := range names {
		if n == s {
			return T(i), true
		}
	}
	return 0, false
}
