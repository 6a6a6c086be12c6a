package message

import (
	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/internal/wire"
)

// iter walks the values of one list or map, flat: it never descends, so
// it needs no stack and allocates nothing. Offsets are within data.
type iter struct {
	data []byte
	pos  int // next value
	end  int // end of the compound's contents
	left int // values not yet read
}

// val is one value found by iter.
type val struct {
	code       amqpsax.Code
	kind       amqpsax.Kind
	start, end int // the whole value
	payload    int // offset of the payload of a fixed-width value, or of a variable one's bytes
}

func (v val) bytes(data []byte) []byte { return data[v.payload:v.end:v.end] }

// openSection checks that sec is one described value whose value is a
// list or map (of kind k), and returns an iterator over its elements.
func openSection(sec []byte, k amqpsax.Kind) (iter, error) {
	if len(sec) == 0 || sec[0] != byte(amqpsax.CodeDescribed) {
		if len(sec) == 0 {
			return iter{}, failStatus(wire.EOF, 0, sec)
		}
		return iter{}, fail(ErrNotSection, 0, amqpsax.Code(sec[0]))
	}
	n, off := wire.Skip(sec[1:]) // the descriptor
	if n < 0 {
		return iter{}, failStatus(wire.Status(n), 1+off, sec)
	}
	vp := 1 + n
	if vp >= len(sec) {
		return iter{}, failStatus(wire.EOF, vp, sec)
	}
	c := amqpsax.Code(sec[vp])
	info := wire.Table[c]
	if info.Kind() != k || (info.Cat() != wire.Compound && c != amqpsax.CodeList0) {
		return iter{}, fail(ErrSectionType, vp, c)
	}
	hdr, size, count := wire.Body(c, sec[vp+1:])
	if hdr < 0 {
		return iter{}, failStatus(wire.Status(hdr), vp, sec)
	}
	return iter{data: sec, pos: vp + 1 + hdr, end: vp + 1 + hdr + size, left: count}, nil
}

// next reads the next value. ok is false at the end; err reports bad input
// (and a size that does not match the contents, at the end).
func (it *iter) next() (v val, ok bool, err error) {
	if it.left == 0 {
		if it.pos != it.end {
			return val{}, false, failStatus(wire.SizeMismatch, it.pos, it.data)
		}
		return val{}, false, nil
	}
	it.left--
	lim := it.data[:it.end]
	if it.pos >= len(lim) {
		return val{}, false, failStatus(wire.EOF, it.pos, lim)
	}
	v.start = it.pos
	v.code = amqpsax.Code(lim[it.pos])
	v.kind = wire.Table[v.code].Kind()
	if v.code == amqpsax.CodeDescribed {
		n, off := wire.Skip(lim[it.pos:])
		if n < 0 {
			return val{}, false, failStatus(wire.Status(n), it.pos+off, lim)
		}
		v.end = it.pos + n
	} else {
		if wire.Table[v.code].Cat() == wire.Invalid {
			return val{}, false, failStatus(wire.BadCode, it.pos, lim)
		}
		hdr, size, count := wire.Body(v.code, lim[it.pos+1:])
		if hdr < 0 {
			return val{}, false, failStatus(wire.Status(hdr), it.pos, lim)
		}
		if wire.Table[v.code].Cat() == wire.Array {
			body := lim[it.pos+1+hdr : it.pos+1+hdr+size]
			if _, cl, off, _ := wire.ArrayCtor(body, count); cl < 0 {
				return val{}, false, failStatus(wire.Status(cl), it.pos+1+hdr+off, lim)
			}
		}
		v.payload = it.pos + 1 + hdr
		v.end = v.payload + size
	}
	it.pos = v.end
	return v, true, nil
}
