//go:build windows

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

var systemPaths = []string{`C:\Windows`, `C:\Program Files`, `C:\Program Files (x86)`}

// Windows confines commands only partly: a restricted token (no admin
// rights, no privileges) and a job object (everything the command starts
// ends with it, no breakaway). Neither limits which files a command
// reads or writes, nor the network, so commands still ask first.
func available() (bool, string) {
	return false, "Windows confines commands only partly (restricted token and job object; no file or network limits)"
}

var (
	advapi32              = windows.NewLazySystemDLL("advapi32.dll")
	procCreateRestricted  = advapi32.NewProc("CreateRestrictedToken")
	disableMaxPrivilege   = uint32(0x1)
	luaToken              = uint32(0x4)
	jobObjectExtendedInfo = uint32(9) // JobObjectExtendedLimitInformation
)

// restrictedToken is this process's token without privileges and with
// the administrators group for deny only (LUA_TOKEN).
func restrictedToken() (windows.Token, error) {
	var cur windows.Token
	if err := windows.OpenProcessToken(windows.CurrentProcess(),
		windows.TOKEN_DUPLICATE|windows.TOKEN_QUERY|windows.TOKEN_ASSIGN_PRIMARY|windows.TOKEN_ADJUST_DEFAULT, &cur); err != nil {
		return 0, fmt.Errorf("sandbox: open this process's token: %w", err)
	}
	defer cur.Close()
	var out windows.Token
	r, _, err := procCreateRestricted.Call(uintptr(cur), uintptr(disableMaxPrivilege|luaToken), 0, 0, 0, 0, 0, 0, uintptr(unsafe.Pointer(&out)))
	if r == 0 {
		return 0, fmt.Errorf("sandbox: CreateRestrictedToken: %w", err)
	}
	return out, nil
}

// start starts cmd with a restricted token in a job object that kills
// everything it holds when closed; cmd.SysProcAttr's other fields are
// kept.
func start(cmd *exec.Cmd, p Policy) error {
	tok, err := restrictedToken()
	if err != nil {
		return err
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Token = syscall.Token(tok)
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		tok.Close()
		return fmt.Errorf("sandbox: create job object: %w", err)
	}
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, jobObjectExtendedInfo, uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		tok.Close()
		windows.CloseHandle(job)
		return fmt.Errorf("sandbox: set job limits: %w", err)
	}
	err = cmd.Start()
	tok.Close()
	if err != nil {
		windows.CloseHandle(job)
		return err
	}
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(cmd.Process.Pid))
	if err == nil {
		err = windows.AssignProcessToJobObject(job, h)
		windows.CloseHandle(h)
	}
	if err != nil {
		_ = cmd.Process.Kill()
		windows.CloseHandle(job)
		return fmt.Errorf("sandbox: put the command in its job object: %w", err)
	}
	// The job handle is left open for the life of the app: closing it
	// would kill the command. It ends with the app (KILL_ON_JOB_CLOSE).
	return nil
}

func execConfined(p Policy, name string, argv []string) error {
	path, err := exec.LookPath(name)
	if err != nil {
		return err
	}
	cmd := exec.Command(path, argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := start(cmd, p); err != nil {
		return err
	}
	err = cmd.Wait()
	if cmd.ProcessState != nil {
		os.Exit(cmd.ProcessState.ExitCode())
	}
	return err
}
