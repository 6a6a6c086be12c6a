//go:build unix

package driver

import (
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
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
	w := &rawWriter{rc: rc, nc: nc}
	w.fn, w.rfn = w.try, w.tryRead
	return w
}

// try is the one attempt of write, on the socket's descriptor (which Go
// keeps non-blocking): what the socket takes at once. It reports true
// whatever happened, so RawConn.Write never waits for the socket.
//
// The system call is made raw (syscall.RawSyscall), as the runtime makes
// its own epoll calls: a call on a non-blocking socket returns at once,
// and the scheduler's syscall bookkeeping (entersyscall) would only wake
// its monitor thread (sysmon) each time the process turns from idle to
// busy, which then polls every 20 µs for a millisecond or more: between
// batches of messages a connection's process idles and wakes again
// thousands of times a second, and those polls were a fifth of a busy
// broker's CPU time.
func (w *rawWriter) try(fd uintptr) bool {
	w.n = 0
	if len(w.b) == 0 {
		return true
	}
	n, _, errno := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&w.b[0])), uintptr(len(w.b)))
	if errno == 0 && int(n) > 0 {
		w.n = int(n)
	} // else EAGAIN (full), EINTR, or a failure: the writer finds out which
	return true
}

// tryRead is one read, raw as try's write (again at once when a signal
// interrupts it): false when the socket has nothing yet (EAGAIN:
// RawConn.Read waits for it to be readable, within the read deadline,
// and calls it again), else true with what it read, io.EOF at the
// peer's end, or the failure.
func (w *rawWriter) tryRead(fd uintptr) bool {
	if len(w.rb) == 0 {
		return true
	}
	n, _, errno := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&w.rb[0])), uintptr(len(w.rb)))
	for errno == syscall.EINTR { // at once again, as package net does: epoll reports no new edge for what is there
		n, _, errno = syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&w.rb[0])), uintptr(len(w.rb)))
	}
	switch {
	case errno == syscall.EAGAIN:
		return false
	case errno != 0:
		w.rerr = &net.OpError{Op: "read", Net: w.nc.LocalAddr().Network(), Source: w.nc.LocalAddr(), Addr: w.nc.RemoteAddr(), Err: os.NewSyscallError("read", errno)}
	case n == 0:
		w.rerr = io.EOF
	default:
		w.rn = int(n)
	}
	return true
}
