package enum

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

type color uint8

type signed int

var colorNames = []string{"red", "green"}

func TestNameReadsTheTableAndNamesAValueOutsideIt(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  string
		want string
	}{
		{"the first value", Name(colorNames, color(0)), "red"},
		{"the last value", Name(colorNames, color(1)), "green"},
		{"one past the table", Name(colorNames, color(2)), "color(2)"},
		{"far past the table", Name(colorNames, color(255)), "color(255)"},
		{"a negative value of a signed type", Name(colorNames, signed(-1)), "signed(-1)"},
		{"an empty table", Name(nil, color(0)), "color(0)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.got)
		})
	}
}

func TestParseFindsANameAndRefusesOthers(t *testing.T) {
	c, ok := Parse[color](colorNames, "green")
	assert.True(t, ok)
	assert.Equal(t, color(1), c)

	_, ok = Parse[color](colorNames, "Green")
	assert.False(t, ok, "names match exactly")
	_, ok = Parse[color](colorNames, "")
	assert.False(t, ok)
	_, ok = Parse[color](colorNames, "color(1)")
	assert.False(t, ok, "the name of a value outside the table does not parse")
}
