//go:build unix && !race

package driver

import (
	"syscall"
	"unsafe"
)

// sysWrite and sysRead are rawWriter's system calls: raw (see try),
// on a non-blocking socket, b not empty. n is what was written or read
// (0 with errno set).
func sysWrite(fd uintptr, b []byte) (n int, errno syscall.Errno) {
	r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if e != 0 {
		return 0, e
	}
	return int(r), 0
}

func sysRead(fd uintptr, b []byte) (n int, errno syscall.Errno) {
	r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if e != 0 {
		return 0, e
	}
	return int(r), 0
}
