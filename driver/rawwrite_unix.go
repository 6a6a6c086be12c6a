//go:build unix

package driver

import (
	"net"
	"syscall"
)

// newRawWriter returns the inline writer of a stream socket (a
// *net.TCPConn, or a *net.UnixConn of network "unix"), nil for any other
// net.Conn.
func newRawWriter(nc net.Conn) *rawWriter {
	var sc syscall.Conn
	switch c := nc.(type) {
	case *net.TCPConn:
		sc = c
	case *net.UnixConn:
		if a := c.LocalAddr(); a == nil || a.Network() != "unix" {
			return nil
		}
		sc = c
	default:
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	w := &rawWriter{rc: rc}
	w.fn = w.try
	return w
}

// try is the one attempt of write, on the socket's descriptor (which Go
// keeps non-blocking): what the socket takes at once. It reports true
// whatever happened, so RawConn.Write never waits for the socket.
func (w *rawWriter) try(fd uintptr) bool {
	n, err := syscall.Write(int(fd), w.b)
	if err != nil || n < 0 {
		n = 0 // EAGAIN (full), EINTR, or a failure: the writer finds out which
	}
	w.n = n
	return true
}
