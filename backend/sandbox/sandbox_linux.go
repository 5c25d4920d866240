//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"sync"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// systemPaths are the read-only folders and files programs need on Linux.
// /proc and /sys are never among them: /proc/<app pid>/environ holds the
// app's own keys.
var systemPaths = []string{
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
	"/run/systemd/resolve", // resolv.conf's target with systemd-resolved
	"/dev/urandom", "/dev/random",
}

// devRW are the device files a process reads and writes.
var devRW = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty"}

var abiOnce = sync.OnceValues(func() (int, error) { return llsys.LandlockGetABIVersion() })

// ABI is the kernel's Landlock ABI version, 0 without Landlock.
func ABI() int {
	v, err := abiOnce()
	if err != nil {
		return 0
	}
	return v
}

func available() (bool, string) {
	v, err := abiOnce()
	if err != nil || v < 1 {
		if err == nil {
			err = errors.New("ABI version 0")
		}
		return false, fmt.Sprintf("this Linux kernel has no Landlock (%v); it needs Linux 5.13 or later with Landlock enabled", err)
	}
	return true, fmt.Sprintf("Landlock ABI %d", v)
}

// configs are the Landlock configurations by ABI; the newest is the one
// this package knows (V7: files, TCP, IPC scoping).
var configs = []landlock.Config{landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5, landlock.V6, landlock.V7}

// ruleset builds p's Landlock ruleset for this kernel, exactly (no best
// effort: a right the kernel cannot handle is reported, not dropped).
func ruleset(p Policy) (fd int, flags uint32, err error) {
	abi := ABI()
	if abi < 1 {
		return -1, 0, ErrUnavailable
	}
	cfg := configs[min(abi, len(configs))-1]
	if p.Network {
		cfg.HandledAccessNet = 0 // TCP left alone
	} else if cfg.HandledAccessNet == 0 {
		return -1, 0, fmt.Errorf("sandbox: this kernel's Landlock (ABI %d) cannot switch the network off; it needs ABI 4 (Linux 6.7)", abi)
	}
	rw := slices.Concat(p.RW, []string{p.Tmp})
	rw = slices.DeleteFunc(rw, func(s string) bool { return s == "" })
	for _, d := range rw {
		if _, err := os.Stat(d); err != nil {
			return -1, 0, fmt.Errorf("sandbox: folder %s to grant: %w", d, err)
		}
	}
	rules := []landlock.Rule{
		landlock.RWDirs(roDirs(rw)...),
		landlock.RWFiles(roFiles(rw)...),
		landlock.RODirs(roDirs(p.RO)...).IgnoreIfMissing(),
		landlock.ROFiles(roFiles(p.RO)...).IgnoreIfMissing(),
		landlock.RWFiles(devRW...).IgnoreIfMissing(),
	}
	// No NetRule: with TCP handled, every connect and bind is denied.
	return cfg.NewRulesetFD(rules...)
}

// roDirs and roFiles split a grant list into its folders and its files
// (Landlock grants folder rights to folders only).
func roDirs(list []string) []string {
	return slices.DeleteFunc(slices.Clone(list), func(p string) bool { fi, err := os.Stat(p); return err != nil || !fi.IsDir() })
}

func roFiles(list []string) []string {
	return slices.DeleteFunc(slices.Clone(list), func(p string) bool { fi, err := os.Stat(p); return err != nil || fi.IsDir() })
}

// start confines a fresh OS thread and starts cmd from it: the child
// inherits the thread's Landlock domain. The thread stays locked to its
// goroutine and is never unlocked, so when the goroutine ends the runtime
// ends the thread with it: no other goroutine of the app ever runs
// confined, and the app itself never is.
func start(cmd *exec.Cmd, p Policy) error {
	fd, flags, err := ruleset(p)
	if err != nil {
		return err
	}
	if fd < 0 {
		return fmt.Errorf("%w: Landlock built no ruleset", ErrUnavailable)
	}
	defer unix.Close(fd)
	started := make(chan error, 1)
	onOwnThread(func() {
		if err := restrictThread(fd, flags); err != nil {
			started <- err
			return
		}
		err := cmd.Start()
		started <- err
		if err == nil && cmd.SysProcAttr != nil && cmd.SysProcAttr.Pdeathsig != 0 {
			// Pdeathsig fires when the parent thread ends: keep this
			// one until the child has ended (without reaping it:
			// cmd.Wait does).
			var info unix.Siginfo
			for {
				err := unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
				if err != unix.EINTR {
					return
				}
			}
		}
	})
	return <-started
}

// onOwnThread runs f in a goroutine locked to an OS thread that is not the
// main one, and never unlocked: when f returns, the runtime ends the
// thread with whatever f did to it. The main thread the runtime cannot
// end, only park for good, so a goroutine that lands there holds it, and
// never confines it, until f's goroutine is locked to another thread.
func onOwnThread(f func()) {
	pinned := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		if unix.Gettid() == unix.Getpid() {
			onOwnThread(f) // cannot land here: this goroutine holds the thread
			runtime.UnlockOSThread()
			close(pinned)
			return
		}
		close(pinned)
		f() // the thread stays locked: it ends with this goroutine
	}()
	<-pinned
}

// restrictThread applies the ruleset to the calling OS thread only.
func restrictThread(fd int, flags uint32) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("sandbox: prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if err := llsys.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("sandbox: landlock_restrict_self: %w", err)
	}
	return nil
}

// execConfined is Main's work: confine this process and execute name.
func execConfined(p Policy, name string, argv []string) error {
	path, err := exec.LookPath(name)
	if err != nil {
		return err
	}
	fd, flags, err := ruleset(p)
	if err != nil {
		return err
	}
	if fd < 0 {
		return fmt.Errorf("%w: Landlock built no ruleset", ErrUnavailable)
	}
	runtime.LockOSThread() // never unlocked: exec replaces the process
	if err := restrictThread(fd, flags); err != nil {
		return err
	}
	unix.Close(fd)
	return fmt.Errorf("run %s: %w", path, syscall.Exec(path, argv, os.Environ()))
}
