//go:build !windows

package browser

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

// chromeProcs lists the live processes whose command line names profile:
// the browser, its helpers, and its crash handler (which leaves the
// process group).
func chromeProcs(t testing.TB, profile string) []int {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("process listing reads /proc")
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !strings.Contains(string(cmd), profile) {
			continue
		}
		if state, _, ok := procStat(pid); ok && state == 'Z' {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}

func TestNoOrphansAfterClose(t *testing.T) {
	s, m, env := setup(t, "orphans")
	b, err := m.For(t.Context(), "orphans")
	if err != nil {
		t.Fatal(err)
	}
	// A few tabs make renderer processes.
	must(t, m, env, "browser_open", map[string]any{"url": s.URL})
	must(t, m, env, "browser_open", map[string]any{"url": s.URL + "/form", "new_tab": true})
	profile := b.profileDir()
	if n := len(chromeProcs(t, profile)); n < 2 {
		t.Fatalf("found %d browser processes on the profile, want the browser and its helpers", n)
	}
	// A crash first: what the crashed browser leaves must go too.
	crashed := b.running()
	killTree(crashed.pid)
	<-crashed.done
	must(t, m, env, "browser_open", map[string]any{"url": s.URL})
	pid := b.running().pid
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if left := chromeProcs(t, profile); len(left) > 0 {
		t.Errorf("processes left on the profile after Close: %v", left)
	}
	if treeAlive(pid) || treeAlive(crashed.pid) {
		t.Errorf("the browsers' process groups %d, %d are still alive", pid, crashed.pid)
	}
	if _, err := m.For(t.Context(), "orphans"); err != ErrClosed {
		t.Errorf("For after Close = %v, want ErrClosed", err)
	}
}

func TestLeftoverBrowserOfAnEarlierRunIsReplaced(t *testing.T) {
	bin := needChrome(t)
	m := testManager(t)
	b, _ := m.browser("left")
	profile := b.profileDir()
	if err := os.MkdirAll(profile, 0o700); err != nil {
		t.Fatal(err)
	}
	// A Chromium the app started before it was killed, still on the profile.
	args := []string{"--headless", "--user-data-dir=" + profile, "--remote-debugging-port=0", "--no-first-run", "about:blank"}
	if asRoot() {
		args = append(args, "--no-sandbox")
	}
	cmd := exec.Command(bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go cmd.Wait()
	t.Cleanup(func() { killTree(cmd.Process.Pid) })
	deadline := time.Now().Add(waittest.Patience)
	for {
		if _, err := os.Readlink(filepath.Join(profile, "SingletonLock")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the leftover browser did not lock the profile")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := m.For(t.Context(), "left"); err != nil {
		t.Fatalf("For with a leftover browser on the profile: %v", err)
	}
	if processAlive(cmd.Process.Pid) {
		t.Errorf("the leftover browser %d still runs", cmd.Process.Pid)
	}
	must(t, m, agentEnv("left", nil), "browser_open", map[string]any{"url": "about:blank"})
}

func TestFreeProfile(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Chromium locks profiles with a file lock on Windows")
	}
	host, _ := os.Hostname()
	t.Run("stale lock of a dead process", func(t *testing.T) {
		dir := t.TempDir()
		for _, f := range singletonFiles {
			if err := os.Symlink(host+"-999999999", filepath.Join(dir, f)); err != nil {
				t.Fatal(err)
			}
		}
		if killed, err := freeProfile(dir); err != nil || killed != 0 {
			t.Fatalf("freeProfile = %d, %v; want 0, nil", killed, err)
		}
		for _, f := range singletonFiles {
			if _, err := os.Lstat(filepath.Join(dir, f)); !os.IsNotExist(err) {
				t.Errorf("%s is left: %v", f, err)
			}
		}
	})
	t.Run("live process of another program", func(t *testing.T) {
		dir := t.TempDir()
		// This test's own pid: alive, but not a browser on this profile.
		if err := os.Symlink(host+"-"+strconv.Itoa(os.Getpid()), filepath.Join(dir, "SingletonLock")); err != nil {
			t.Fatal(err)
		}
		if killed, err := freeProfile(dir); err != nil || killed != 0 {
			t.Fatalf("freeProfile = %d, %v; want the lock removed and nothing killed", killed, err)
		}
		if _, err := os.Lstat(filepath.Join(dir, "SingletonLock")); !os.IsNotExist(err) {
			t.Errorf("lock left: %v", err)
		}
	})
	t.Run("live process on the profile", func(t *testing.T) {
		dir := t.TempDir()
		cmd := exec.Command("sh", "-c", "sleep 60; true", "--user-data-dir="+dir)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); cmd.Wait() }()
		t.Cleanup(func() { killTree(cmd.Process.Pid); wg.Wait() })
		if err := os.Symlink(host+"-"+strconv.Itoa(cmd.Process.Pid), filepath.Join(dir, "SingletonLock")); err != nil {
			t.Fatal(err)
		}
		// Start returns once exec has closed the child's descriptors, a
		// moment before the kernel fills in the new command line (which
		// reads empty until then). A browser left by an earlier run is long
		// past that moment; wait for this one to be too.
		for deadline := time.Now().Add(waittest.Patience); !usesProfile(cmd.Process.Pid, dir); {
			if time.Now().After(deadline) {
				t.Fatal("the stand-in browser's command line never showed its profile")
			}
			time.Sleep(5 * time.Millisecond)
		}
		killed, err := freeProfile(dir)
		if err != nil || killed != cmd.Process.Pid {
			t.Fatalf("freeProfile = %d, %v; want %d killed", killed, err, cmd.Process.Pid)
		}
		wg.Wait()
		if cmd.ProcessState == nil || cmd.ProcessState.Success() {
			t.Errorf("the process on the profile was not killed: %v", cmd.ProcessState)
		}
	})
}

// The browser keeps the protections go-rod's default launcher turns off,
// runs headless with its own profile, and is sandboxed unless the app runs
// as root.
func TestLaunchFlags(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	m := testManager(t)
	b, err := m.For(t.Context(), "flags")
	if err != nil {
		t.Fatal(err)
	}
	raw, ok := cmdline(b.running().pid)
	if !ok {
		t.Fatal("cannot read the browser's command line")
	}
	cmd := strings.ReplaceAll(raw, "\x00", " ") + " "
	for _, want := range []string{"--headless ", "--user-data-dir=" + b.profileDir() + " ", "--remote-debugging-port=0 ", "--disable-gpu ", "--disable-component-update "} {
		if !strings.Contains(cmd, want) {
			t.Errorf("command line lacks %q: %s", want, cmd)
		}
	}
	for _, bad := range []string{"--disable-site-isolation-trials", "--disable-popup-blocking", "site-per-process", "--enable-automation", "--disable-web-security"} {
		if strings.Contains(cmd, bad) {
			t.Errorf("command line has %q: %s", bad, cmd)
		}
	}
	if sandboxOff := strings.Contains(cmd, "--no-sandbox"); sandboxOff != asRoot() {
		t.Errorf("--no-sandbox present = %v while running as root = %v", sandboxOff, asRoot())
	}
}
