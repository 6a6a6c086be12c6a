package bench

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the broker process end with the test binary, even
// when that is killed.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
