package amqp

// buffer is the byte buffer the Marshal and Unmarshal methods take, as
// go-amqp's take its internal buffer.Buffer. Programs have no use for
// them: they keep go-amqp's method sets.

// buffer is bytes being written (appended at the end) or read (from the
// read offset on).
type buffer struct {
	b []byte
	i int
}

// newBuffer returns a buffer that reads b.
func newBuffer(b []byte) *buffer { return &buffer{b: b} }

// Append appends p.
func (b *buffer) Append(p []byte) { b.b = append(b.b, p...) }

// AppendByte appends one byte.
func (b *buffer) AppendByte(c byte) { b.b = append(b.b, c) }

// Bytes returns the unread bytes.
func (b *buffer) Bytes() []byte { return b.b[b.i:] }

// Len returns the number of unread bytes.
func (b *buffer) Len() int { return len(b.b) - b.i }

// Skip moves the read offset n bytes on, at most to the end.
func (b *buffer) Skip(n int) { b.i += min(max(n, 0), b.Len()) }

// Reset empties b, keeping its storage.
func (b *buffer) Reset() { b.b, b.i = b.b[:0], 0 }

// Detach returns the unread bytes and empties b, which no longer refers to them.
func (b *buffer) Detach() []byte {
	p := b.b[b.i:]
	b.b, b.i = nil, 0
	return p
}
