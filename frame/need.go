package frame

// Need returns how many bytes the protocol header or frame at the start
// of b takes in all, for a caller that keeps a partial frame and fills it
// from the next reads: 8 while b holds fewer than 8 bytes, then the
// frame's size (8 for a protocol header); 0 when the 8-byte header can
// never start a valid frame (Split says why). maxFrameSize is as for
// Split. It reads the same rules as Split.
func Need(b []byte, maxFrameSize uint32) int {
	_, n, need, cause := split(b, limit(maxFrameSize))
	switch {
	case cause != nil:
		return 0
	case n > 0:
		return n
	}
	return need
}
