package dump

import "sort"

// segment is a run of a joined message that is contiguous in the input:
// the message's bytes from pos on were read at input offset off.
type segment struct {
	pos int
	off int64
}

// segments maps positions in a value's bytes to input offsets. A message
// joined from many transfers has one segment per transfer; everything
// else has one. Lookups are amortised O(1) while positions grow, as they
// do when a value is printed in order (a hint remembers the last
// segment), and O(log n) otherwise (binary search), so printing a message
// of n transfers costs O(lines + n), not O(lines × n).
type segments struct {
	list []segment
	hint int
	// steps counts segments passed over by lookups (a test hook: it must
	// grow linearly with the output).
	steps int
}

// at makes s map position p to off+p.
func (s *segments) at(off int64) *segments {
	s.list = append(s.list[:0], segment{0, off})
	s.hint = 0
	return s
}

// set makes s map by list, which it keeps.
func (s *segments) set(list []segment) *segments {
	s.list, s.hint = list, 0
	return s
}

// offset returns the input offset of position pos.
func (s *segments) offset(pos int) int64 {
	l := s.list
	if len(l) == 0 {
		return int64(pos)
	}
	i := min(s.hint, len(l)-1)
	if pos < l[i].pos {
		// Backwards (an error about the start of a value, the message's
		// first line): binary search.
		i = sort.Search(i, func(j int) bool { return l[j].pos > pos }) - 1
		i = max(i, 0)
		s.steps++
	} else {
		for i+1 < len(l) && l[i+1].pos <= pos {
			i++
			s.steps++
		}
	}
	s.hint = i
	return l[i].off + int64(pos-l[i].pos)
}
