//go:build unix && race

package driver

import (
	"errors"
	"syscall"
)

// sysWrite and sysRead are rawWriter's system calls, under the race
// detector: through package syscall's Write and Read, which tell the
// detector that what a write sends happens before what a read of it
// receives (as every read and write of package net does), so a program
// whose two ends talk over a socket in one process (amqptest, a
// broker beside its clients) is not reported racing on what they hand
// each other. A raw call tells it nothing.
func sysWrite(fd uintptr, b []byte) (n int, errno syscall.Errno) {
	n, err := syscall.Write(int(fd), b)
	return result(n, err)
}

func sysRead(fd uintptr, b []byte) (n int, errno syscall.Errno) {
	n, err := syscall.Read(int(fd), b)
	return result(n, err)
}

func result(n int, err error) (int, syscall.Errno) {
	var e syscall.Errno
	if errors.As(err, &e) {
		return 0, e
	}
	return max(n, 0), 0
}
