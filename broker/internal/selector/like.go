package selector

import "unicode/utf8"

// likeTok is one element of a compiled LIKE pattern: literal text, one
// character (_), or any run of characters (%).
type likeTok struct {
	any, one bool
	lit      string
}

// compileLike compiles pattern with its escape character (-1 for none):
// an escaped _ or % (or escape) is literal. It reports false for a
// pattern that ends with the escape character.
func compileLike(pattern string, esc rune) ([]likeTok, bool) {
	var toks []likeTok
	var lit []byte
	flush := func() {
		if len(lit) > 0 {
			toks = append(toks, likeTok{lit: string(lit)})
			lit = lit[:0]
		}
	}
	for i := 0; i < len(pattern); {
		r, n := utf8.DecodeRuneInString(pattern[i:])
		i += n
		switch {
		case r == esc:
			if i >= len(pattern) {
				return nil, false
			}
			r2, n2 := utf8.DecodeRuneInString(pattern[i:])
			i += n2
			lit = utf8.AppendRune(lit, r2)
		case r == '%':
			flush()
			if len(toks) == 0 || !toks[len(toks)-1].any {
				toks = append(toks, likeTok{any: true})
			}
		case r == '_':
			flush()
			toks = append(toks, likeTok{one: true})
		default:
			lit = utf8.AppendRune(lit, r)
		}
	}
	flush()
	return toks, true
}

// matchLike matches s against a compiled pattern, character by character
// (_ is one UTF-8 character, not one byte).
func matchLike(toks []likeTok, s []byte) bool {
	ok, _ := likeSteps(toks, s)
	return ok
}

// likeSteps is matchLike, and its work: the turns its loop took and the
// bytes it compared. The one backtracking point is the last % passed, so
// the work is at most the pattern's length times the value's
// (TestLikeWork counts it).
func likeSteps(toks []likeTok, s []byte) (ok bool, steps int) {
	ti, si := 0, 0
	star, starS := -1, 0
	for ; ; steps++ {
		if ti < len(toks) {
			t := &toks[ti]
			switch {
			case t.any:
				star, starS = ti, si
				ti++
				continue
			case t.one:
				if si < len(s) {
					_, n := utf8.DecodeRune(s[si:])
					si += n
					ti++
					continue
				}
			default:
				steps += len(t.lit)
				if len(s)-si >= len(t.lit) && string(s[si:si+len(t.lit)]) == t.lit {
					si += len(t.lit)
					ti++
					continue
				}
			}
		} else if si == len(s) {
			return true, steps
		}
		// mismatch: let the last % take one more character
		if star < 0 || starS >= len(s) {
			return false, steps
		}
		_, n := utf8.DecodeRune(s[starS:])
		starS += n
		ti, si = star+1, starS
	}
}
