package browser

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// FindChrome returns the browser executable to run: bin when set (the value
// of RERUN_CHROME: a path, or a name looked up in PATH), else the first
// Chromium, Chrome or Edge found in the usual places of this OS. Finding
// none is an ErrNoBrowser error that says what to install.
func FindChrome(bin string) (string, error) {
	return findChrome(bin, runtime.GOOS, exec.LookPath, isExecutable, os.Getenv)
}

// findChrome is FindChrome with the OS and the file system passed in, so
// every OS's search order is testable anywhere.
func findChrome(bin, goos string, lookPath func(string) (string, error), exists func(string) bool, getenv func(string) string) (string, error) {
	if bin != "" {
		if strings.ContainsAny(bin, `/\`) {
			if exists(bin) {
				return bin, nil
			}
			return "", fmt.Errorf("%w: RERUN_CHROME is %q, which is not an executable file; point it at Chromium or Chrome, or unset it to search the usual places", ErrNoBrowser, bin)
		}
		if p, err := lookPath(bin); err == nil {
			return p, nil
		}
		return "", fmt.Errorf("%w: RERUN_CHROME is %q, which is not in PATH; give the full path of Chromium or Chrome, or unset it", ErrNoBrowser, bin)
	}
	names, paths := chromeCandidates(goos, getenv)
	for _, n := range names {
		if p, err := lookPath(n); err == nil {
			return p, nil
		}
	}
	for _, p := range paths {
		if exists(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: %s, or set RERUN_CHROME to the browser's executable", ErrNoBrowser, installHint(goos))
}

// chromeCandidates lists, for goos, the names to look up in PATH and then
// the fixed paths to try, most likely first.
func chromeCandidates(goos string, getenv func(string) string) (names, paths []string) {
	switch goos {
	case "darwin":
		apps := []string{
			"Google Chrome.app/Contents/MacOS/Google Chrome",
			"Chromium.app/Contents/MacOS/Chromium",
			"Google Chrome Beta.app/Contents/MacOS/Google Chrome Beta",
			"Microsoft Edge.app/Contents/MacOS/Microsoft Edge",
			"Brave Browser.app/Contents/MacOS/Brave Browser",
		}
		for _, a := range apps {
			paths = append(paths, "/Applications/"+a)
		}
		if home := getenv("HOME"); home != "" {
			for _, a := range apps {
				paths = append(paths, home+"/Applications/"+a)
			}
		}
		return []string{"chromium", "google-chrome"}, paths
	case "windows":
		bases := []string{getenv("ProgramFiles"), getenv("ProgramFiles(x86)"), getenv("LocalAppData")}
		rel := []string{
			`Google\Chrome\Application\chrome.exe`,
			`Chromium\Application\chrome.exe`,
			`Microsoft\Edge\Application\msedge.exe`,
			`BraveSoftware\Brave-Browser\Application\brave.exe`,
		}
		for _, r := range rel {
			for _, b := range bases {
				if b != "" {
					paths = append(paths, strings.TrimRight(b, `\`)+`\`+r)
				}
			}
		}
		return []string{"chrome.exe", "msedge.exe"}, paths
	default: // Linux and the BSDs
		names = []string{"chromium", "chromium-browser", "google-chrome-stable", "google-chrome", "chrome", "microsoft-edge-stable", "brave-browser"}
		paths = []string{
			"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome-stable", "/usr/bin/google-chrome",
			"/usr/local/bin/chromium", "/usr/lib/chromium/chromium", "/opt/google/chrome/chrome",
			"/usr/local/bin/chrome", "/opt/microsoft/msedge/msedge", "/opt/brave.com/brave/brave",
			// Snap's Chromium cannot write profiles under hidden folders such as
			// ~/.local/share: the last resort.
			"/snap/bin/chromium",
		}
		return names, paths
	}
}

// installHint says what to install on goos.
func installHint(goos string) string {
	switch goos {
	case "darwin":
		return "install Google Chrome (google.com/chrome) or Chromium in /Applications"
	case "windows":
		return "install Google Chrome (google.com/chrome) or Microsoft Edge"
	default:
		return "install Chromium (Debian/Ubuntu: sudo apt install chromium; Fedora: sudo dnf install chromium; Arch: sudo pacman -S chromium) or Google Chrome"
	}
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	if err != nil || fi.IsDir() {
		return false
	}
	return runtime.GOOS == "windows" || fi.Mode().Perm()&0o111 != 0
}

// childEnv is the environment of a browser process: the app's, without what
// looks like a credential (API keys reach the app through its environment;
// a browser has no use for them), and on Linux and the BSDs with HOME and
// the XDG folders inside the profile, so crash reports and caches stay out
// of the person's own ~/.config.
func childEnv(environ []string, profile, goos string) []string {
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if secretName(name) {
			continue
		}
		if goos != "darwin" && goos != "windows" {
			switch name {
			case "HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME":
				continue
			}
		}
		out = append(out, kv)
	}
	if goos != "darwin" && goos != "windows" {
		out = append(out, "HOME="+profile,
			"XDG_CONFIG_HOME="+filepath.Join(profile, ".config"),
			"XDG_CACHE_HOME="+filepath.Join(profile, ".cache"))
	}
	return out
}

// secretName reports whether an environment variable's name says it holds a
// credential.
func secretName(name string) bool {
	u := strings.ToUpper(name)
	for _, w := range []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "SSH_AUTH_SOCK"} {
		if strings.Contains(u, w) {
			return true
		}
	}
	for _, p := range []string{"RERUN_", "ANTHROPIC_", "OPENAI_", "AWS_", "AZURE_", "GITHUB_", "GH_", "GOOGLE_APPLICATION"} {
		if strings.HasPrefix(u, p) {
			return true
		}
	}
	return false
}

// Files Chromium uses to keep a second process off a profile.
var singletonFiles = []string{"SingletonLock", "SingletonSocket", "SingletonCookie"}

// freeProfile readies the profile at dir for a new browser. A Chromium an
// earlier run of the app left running on it (the app was killed before it
// could stop it) is killed: otherwise the new process would hand its
// command line to the old one and exit. A lock a crashed browser left behind
// is removed. It returns the pid it killed, or 0.
func freeProfile(dir string) (killed int, err error) {
	target, err := os.Readlink(filepath.Join(dir, "SingletonLock"))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err == nil {
		// The lock is "<hostname>-<pid>".
		host, pid := splitLock(target)
		me, _ := os.Hostname()
		if pid > 0 && host == me && processAlive(pid) && usesProfile(pid, dir) {
			killTree(pid)
			if !waitGone(pid, lockWait) {
				return 0, fmt.Errorf("a browser (pid %d) from an earlier run still holds the profile %s and did not stop; end it and try again", pid, dir)
			}
			killed = pid
		}
	}
	// Dead, foreign or unreadable: the lock is stale.
	for _, f := range singletonFiles {
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return killed, fmt.Errorf("remove stale browser lock %s: %w", f, err)
		}
	}
	return killed, nil
}

// splitLock parses a SingletonLock target, "<hostname>-<pid>".
func splitLock(target string) (host string, pid int) {
	i := strings.LastIndexByte(target, '-')
	if i < 0 {
		return "", 0
	}
	if _, err := fmt.Sscanf(target[i+1:], "%d", &pid); err != nil {
		return "", 0
	}
	return target[:i], pid
}

// usesProfile reports whether process pid was started with --user-data-dir
// dir (a pid can be reused by an unrelated process after a reboot).
func usesProfile(pid int, dir string) bool {
	cmd, ok := cmdline(pid)
	if !ok {
		// Cannot tell: a live pid named in our own profile's lock is most
		// likely ours.
		return true
	}
	abs, _ := filepath.Abs(dir)
	for _, d := range []string{dir, abs} {
		flag := "--user-data-dir=" + d
		for rest := cmd; ; {
			i := strings.Index(rest, flag)
			if i < 0 {
				break
			}
			rest = rest[i+len(flag):]
			if rest == "" || rest[0] == 0 || rest[0] == ' ' {
				return true
			}
		}
	}
	return false
}
