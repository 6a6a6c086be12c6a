// Package accept is the rule the library's accept loops share (package
// driver's Server, package broker): which errors of a listener's Accept
// pass, and how long to pause after one before accepting again, as
// net/http's Server does. A loop that ended at such an error (a process
// out of file descriptors for a moment) would end the program that runs
// it.
package accept

import (
	"errors"
	"net"
	"time"
)

// Passing reports an accept error that passes: one whose Temporary
// method reports true (a *net.OpError of accept with EMFILE or ENFILE:
// too many open files in the process or the system) or a time-out. Any
// other error ends the listener.
func Passing(err error) bool {
	var te interface{ Temporary() bool }
	if errors.As(err, &te) && te.Temporary() {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Pause returns the pause after an accept error that passes, given the
// last one (0 after an accept that worked): 5 ms, then double the last,
// up to 1 s.
func Pause(last time.Duration) time.Duration {
	return min(max(2*last, 5*time.Millisecond), time.Second)
}
