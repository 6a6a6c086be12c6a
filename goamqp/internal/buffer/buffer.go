// Package buffer is the byte buffer the Marshal and Unmarshal methods of
// package amqp's types take, as go-amqp's do. Programs have no use for
// it: it exists so that those methods keep go-amqp's signatures.
package buffer

// Buffer is bytes being written (appended at the end) or read (from the
// read offset on).
type Buffer struct {
	b []byte
	i int
}

// New returns a Buffer that reads b.
func New(b []byte) *Buffer { return &Buffer{b: b} }

// Append appends p.
func (b *Buffer) Append(p []byte) { b.b = append(b.b, p...) }

// AppendByte appends one byte.
func (b *Buffer) AppendByte(c byte) { b.b = append(b.b, c) }

// Bytes returns the unread bytes.
func (b *Buffer) Bytes() []byte { return b.b[b.i:] }

// Len returns the number of unread bytes.
func (b *Buffer) Len() int { return len(b.b) - b.i }

// Skip moves the read offset n bytes on, at most to the end.
func (b *Buffer) Skip(n int) { b.i += min(max(n, 0), b.Len()) }

// Reset empties b, keeping its storage.
func (b *Buffer) Reset() { b.b, b.i = b.b[:0], 0 }

// Detach returns the unread bytes and empties b, which no longer refers to them.
func (b *Buffer) Detach() []byte {
	p := b.b[b.i:]
	b.b, b.i = nil, 0
	return p
}
