//go:build !linux

package devchain

import (
	"os/exec"
	"syscall"
)

// detach puts the node in its own process group (see proc_linux.go; other
// systems have no parent-death signal).
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}
