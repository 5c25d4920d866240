//go:build linux

package tool

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// setProcessGroup puts the command in a new process group led by the shell,
// so killGroup reaches everything it starts, and has the kernel kill the
// shell if the app dies (Pdeathsig). The parent-death signal fires when the
// OS thread that started the child exits, not the process: startCommand
// keeps that thread for the command alone until it ends. What the shell
// started is not the kernel's to kill; the next start ends it
// (EndProcessGroup).
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// procIdentity names process pid as it is now: the boot and the process's
// start time in clock ticks since boot, "boot:ticks". A pid the kernel reuses
// has another start time, so the same identity is the same process. "" when
// pid is not running.
func procIdentity(pid int) string {
	st, err := readStat(pid)
	if err != nil {
		return ""
	}
	return bootID() + ":" + strconv.FormatUint(st.start, 10)
}

func bootID() string {
	b, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return strings.TrimSpace(string(b))
}

// procStat is what EndProcessGroup reads of /proc/<pid>/stat.
type procStat struct {
	pgrp  int
	start uint64 // clock ticks after boot
}

func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	return parseStat(b)
}

// parseStat reads the process group and start time from the text of
// /proc/<pid>/stat: "pid (comm) state ppid pgrp … starttime …", where comm
// may hold spaces and parentheses (the last ")" ends it) and starttime is
// field 22.
func parseStat(b []byte) (procStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, errors.New("stat: no ) after the command name")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return procStat{}, fmt.Errorf("stat: %d fields after the command name, want at least 20", len(f))
	}
	pgrp, err := strconv.Atoi(f[2])
	if err != nil {
		return procStat{}, fmt.Errorf("stat: process group %q: %w", f[2], err)
	}
	start, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return procStat{}, fmt.Errorf("stat: start time %q: %w", f[19], err)
	}
	return procStat{pgrp: pgrp, start: start}, nil
}

// EndProcessGroup kills what is left of the process group a command of an
// earlier app started (p, recorded when it started) and reports how many
// processes it found. It kills only that group: after a reboot nothing of
// it is left; a live leader must have the start time recorded (else its pid
// was reused and the group is gone); with the leader dead, the group id
// cannot be reused while any member lives, and a member must have started
// no earlier than the leader.
func EndProcessGroup(p Process) (int, error) {
	boot, ticks, ok := strings.Cut(p.Start, ":")
	leaderStart, err := strconv.ParseUint(ticks, 10, 64)
	if !ok || err != nil || p.PID <= 1 {
		return 0, fmt.Errorf("process %d: identity %q is not boot:ticks", p.PID, p.Start)
	}
	if boot != bootID() {
		return 0, nil // rebooted since: the group died with the machine
	}
	found := 0
	for round := 0; round < 10; round++ {
		members, err := groupMembers(p.PID)
		if err != nil {
			return found, err
		}
		ours := false
		for pid, start := range members {
			if pid == p.PID && start != leaderStart {
				return found, nil // the pid leads another group now: ours is gone
			}
			ours = ours || start >= leaderStart
		}
		if len(members) == 0 || !ours {
			return found, nil
		}
		if round == 0 {
			found = len(members)
		}
		if err := syscall.Kill(-p.PID, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			return found, fmt.Errorf("kill process group %d: %w", p.PID, err)
		}
		time.Sleep(10 * time.Millisecond) // SIGKILL lands asynchronously
	}
	return found, nil
}

// groupMembers is the live processes of group pgid, each with its start
// time; zombies (killed, not yet reaped) are left out.
func groupMembers(pgid int) (map[int]uint64, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	out := map[int]uint64{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		st, err := parseStat(b)
		if err != nil || st.pgrp != pgid || zombie(b) {
			continue
		}
		out[pid] = st.start
	}
	return out, nil
}

func zombie(stat []byte) bool {
	i := bytes.LastIndexByte(stat, ')')
	f := strings.Fields(string(stat[i+1:]))
	return len(f) > 0 && (f[0] == "Z" || f[0] == "X")
}
