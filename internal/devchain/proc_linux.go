package devchain

import (
	"os/exec"
	"syscall"
)

// detach puts the node in its own process group, so that a Ctrl-C meant for
// chainquery does not kill it before chainquery has shut down cleanly, and
// has the kernel kill it if chainquery dies without closing it (a test that
// times out, a kill -9), so that no node outlives its parent.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
