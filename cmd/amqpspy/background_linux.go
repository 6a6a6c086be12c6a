package main

import (
	"runtime"
	"syscall"
)

// background makes the calling goroutine, a printer or recorder, run on a
// thread of its own at the lowest scheduling priority (nice 19), so that
// the forwarding goroutines, and the programs on either side, get the
// CPU first: when it is short, printing falls behind (into its queue, and
// past it drops) rather than forwarding slowing down. The thread ends with
// the goroutine (it stays locked), so no other goroutine runs at that
// priority.
func background() {
	runtime.LockOSThread()
	syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), 19)
}
