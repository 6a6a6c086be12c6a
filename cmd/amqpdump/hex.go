package main

import (
	"errors"
	"fmt"
)

// errOddHex is the cause of the error for hex input with an odd number of
// digits.
var errOddHex = errors.New("odd number of hex digits")

// decodeHex decodes hex text, ignoring ASCII white space between digits
// and comments from "#" to the end of a line. Its errors give the line and
// column (counted in bytes, from 1) of the fault.
func decodeHex(text []byte) ([]byte, error) {
	out := make([]byte, 0, len(text)/2)
	line, col := 1, 0
	lastLine, lastCol := 0, 0 // of the last digit
	var hi byte
	half, comment := false, false
	for _, c := range text {
		col++
		var v byte
		switch {
		case c == '\n':
			line, col, comment = line+1, 0, false
			continue
		case comment:
			continue
		case c == '#':
			comment = true
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			continue
		case '0' <= c && c <= '9':
			v = c - '0'
		case 'a' <= c && c <= 'f':
			v = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			v = c - 'A' + 10
		default:
			return nil, fmt.Errorf("hex input: invalid character %q at line %d, column %d", c, line, col)
		}
		if half {
			out = append(out, hi<<4|v)
		} else {
			hi = v
		}
		half = !half
		lastLine, lastCol = line, col
	}
	if half {
		return nil, fmt.Errorf("hex input: %w: the last digit, at line %d, column %d, has no pair", errOddHex, lastLine, lastCol)
	}
	return out, nil
}
