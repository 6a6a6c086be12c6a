package cases

import (
	"regexp"
	"testing"
)

// TestWhere: every row of the tables names its own line of cases.go, so a
// failing row can be found from the test's message.
func TestWhere(t *testing.T) {
	row := regexp.MustCompile(`^cases\.go:[0-9]+$`)
	seen := map[string]string{}
	check := func(name, where string) {
		if !row.MatchString(where) {
			t.Errorf("%s: row at %q, want cases.go:LINE", name, where)
		}
		if other, ok := seen[where]; ok {
			t.Errorf("%s and %s: both at %s", other, name, where)
		}
		seen[where] = name
	}
	for _, c := range Valid {
		check(c.Name, c.Where)
	}
	for _, tables := range [][]Bad{Invalid, InvalidText} {
		for _, c := range tables {
			check(c.Name, c.Where)
		}
	}
}
