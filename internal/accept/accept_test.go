package accept

import (
	"errors"
	"net"
	"os"
	"slices"
	"syscall"
	"testing"
	"time"
)

// The pause doubles from 5 ms and stops at 1 s.
func TestPause(t *testing.T) {
	var got []time.Duration
	for pause := time.Duration(0); len(got) < 10; {
		pause = Pause(pause)
		got = append(got, pause/time.Millisecond)
	}
	if want := []time.Duration{5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000}; !slices.Equal(got, want) {
		t.Fatalf("pauses %v ms, want %v", got, want)
	}
}

type timeout struct{}

func (timeout) Error() string   { return "i/o timeout" }
func (timeout) Timeout() bool   { return true }
func (timeout) Temporary() bool { return false }

// Out of file descriptors (the process, the system) and a time-out pass; a
// closed or broken listener does not.
func TestPassing(t *testing.T) {
	accept := func(e syscall.Errno) error {
		return &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept", e)}
	}
	for _, err := range []error{accept(syscall.EMFILE), accept(syscall.ENFILE), timeout{}} {
		if !Passing(err) {
			t.Errorf("%v does not pass", err)
		}
	}
	closed := &net.OpError{Op: "accept", Net: "tcp", Err: net.ErrClosed}
	for _, err := range []error{closed, accept(syscall.EINVAL), errors.New("listener broken")} {
		if Passing(err) {
			t.Errorf("%v passes", err)
		}
	}
}
