package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// errOddHex is the cause of the error for hex input with an odd number of
// digits.
var errOddHex = errors.New("odd number of hex digits")

// hexReader decodes hex text as it is read, ignoring ASCII white space
// between digits and comments from "#" to the end of a line. Its errors
// give the line and column (counted in bytes, from 1) of the fault; the
// bytes decoded before a fault are returned first.
type hexReader struct {
	r                 *bufio.Reader
	line, col         int
	lastLine, lastCol int // of the last digit
	hi                byte
	half, comment     bool
	err               error
}

func newHexReader(r io.Reader) *hexReader {
	return &hexReader{r: bufio.NewReaderSize(r, 64<<10), line: 1}
}

func (h *hexReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && h.err == nil {
		c, err := h.r.ReadByte()
		if err != nil {
			h.err = err
			if err == io.EOF && h.half {
				h.err = fmt.Errorf("hex input: %w: the last digit, at line %d, column %d, has no pair", errOddHex, h.lastLine, h.lastCol)
			}
			break
		}
		h.col++
		var v byte
		switch {
		case c == '\n':
			h.line, h.col, h.comment = h.line+1, 0, false
			continue
		case h.comment:
			continue
		case c == '#':
			h.comment = true
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
			h.err = fmt.Errorf("hex input: invalid character %q at line %d, column %d", c, h.line, h.col)
			continue
		}
		if h.half {
			p[n] = h.hi<<4 | v
			n++
		} else {
			h.hi = v
		}
		h.half = !h.half
		h.lastLine, h.lastCol = h.line, h.col
	}
	if n > 0 {
		return n, nil
	}
	return 0, h.err
}

// decodeHex decodes the whole of a hex text (see hexReader).
func decodeHex(text []byte) ([]byte, error) {
	out, err := io.ReadAll(newHexReader(bytes.NewReader(text)))
	if err != nil {
		return nil, err
	}
	return out, nil
}
