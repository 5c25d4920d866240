//go:build linux

package app

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/godbus/dbus/v5"
	"github.com/godbus/dbus/v5/prop"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/notify"
	"github.com/rerun-build/rerun-desktop/backend/update"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

// sessionBus starts a private D-Bus session bus (Debian's dbus-daemon) for
// the test and points the process at it.
func sessionBus(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("dbus-daemon"); err != nil {
		t.Skip("dbus-daemon is not installed (build/setup.sh installs it)")
	}
	cmd := exec.Command("dbus-daemon", "--session", "--nofork", "--nopidfile",
		"--address=unix:path="+filepath.Join(t.TempDir(), "bus"), "--print-address=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addrs := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		addrs <- strings.TrimSpace(line)
		io.Copy(io.Discard, out)
	}()
	addr := waittest.Recv(t, "the bus address", addrs)
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", addr)
	return addr
}

// watcher is a stand-in StatusNotifierWatcher, what a panel runs: it
// records the items that register.
type watcher struct{ items chan [2]string }

func (w *watcher) RegisterStatusNotifierItem(sender dbus.Sender, path string) *dbus.Error {
	w.items <- [2]string{string(sender), path}
	return nil
}

// menuEntry is one entry of a com.canonical.dbusmenu layout.
type menuEntry struct {
	id    int32
	label string
}

// menuOf reads the item's menu over D-Bus, as a panel does.
func menuOf(t *testing.T, obj dbus.BusObject) []menuEntry {
	t.Helper()
	var rev uint32
	var layout struct {
		ID       int32
		Props    map[string]dbus.Variant
		Children []dbus.Variant
	}
	if err := obj.Call("com.canonical.dbusmenu.GetLayout", 0, int32(0), int32(-1), []string{}).Store(&rev, &layout); err != nil {
		t.Fatalf("GetLayout: %v", err)
	}
	var out []menuEntry
	for _, c := range layout.Children {
		fields, ok := c.Value().([]any)
		if !ok || len(fields) < 2 {
			t.Fatalf("menu entry %v is not (id, properties, children)", c)
		}
		props, _ := fields[1].(map[string]dbus.Variant)
		if typ, ok := props["type"]; ok && typ.Value() == "separator" {
			continue
		}
		if vis, ok := props["visible"]; ok && vis.Value() == false {
			continue
		}
		label, _ := props["label"].Value().(string)
		out = append(out, menuEntry{fields[0].(int32), label})
	}
	return out
}

func labels(m []menuEntry) string {
	var l []string
	for _, e := range m {
		l = append(l, e.label)
	}
	return strings.Join(l, " | ")
}

// The tray icon, tested from outside as a panel sees it: on a private
// session bus with a stand-in watcher, the item registers, its properties
// and menu read over D-Bus say what waits, live, and clicking its entries
// pauses and resumes every coworker, opens the window and quits.
func TestTrayOverDBus(t *testing.T) {
	if raceEnabled {
		// GetLayout reads the menu's version under one lock while refresh
		// writes it under another (systray_menu_unix.go); make test-go runs
		// this test again without -race.
		t.Skip("fyne.io/systray v1.12.2 races on its menu version; run without -race")
	}
	addr := sessionBus(t)
	ctx := context.Background()

	panel, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer panel.Close()
	w := &watcher{items: make(chan [2]string, 4)}
	if err := panel.Export(w, "/StatusNotifierWatcher", watcherName); err != nil {
		t.Fatal(err)
	}
	if _, err := prop.Export(panel, "/StatusNotifierWatcher", prop.Map{watcherName: {
		"IsStatusNotifierHostRegistered": {Value: true},
	}}); err != nil {
		t.Fatal(err)
	}
	if reply, err := panel.RequestName(watcherName, dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("own the watcher's name: %v %v", reply, err)
	}

	home, err := workspace.Open(ctx, workspace.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer home.Close()
	ws, _ := home.Workspace(home.Current())
	boxes, _ := ws.Boxes.List(ctx)
	a, err := ws.Agents.Create(ctx, agent.NewAgent{Name: "Scout", BoxID: boxes[0].ID})
	if err != nil {
		t.Fatal(err)
	}

	opened, quit := make(chan struct{}, 4), make(chan struct{}, 4)
	var newer atomic.Value
	newer.Store("")
	tctx, stop := context.WithCancel(ctx)
	defer stop()
	tr := startTray(tctx, home, trayActions{
		Open:       func() { opened <- struct{}{} },
		Quit:       func() { quit <- struct{}{} },
		NewVersion: func() string { return newer.Load().(string) },
	}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if tr == nil {
		t.Fatal("no tray on a session bus")
	}

	reg := waittest.Recv(t, "the item registers with the watcher", w.items)
	item := panel.Object(reg[0], dbus.ObjectPath("/StatusNotifierItem"))
	if reg[1] != "/StatusNotifierItem" {
		t.Errorf("registered path %q, want /StatusNotifierItem", reg[1])
	}
	for name, want := range map[string]string{"Title": "Rerun", "Status": "Active", "Category": "ApplicationStatus"} {
		v, err := item.GetProperty("org.kde.StatusNotifierItem." + name)
		if err != nil || v.Value() != want {
			t.Errorf("property %s = %v (%v), want %q", name, v, err, want)
		}
	}
	mv, err := item.GetProperty("org.kde.StatusNotifierItem.Menu")
	if err != nil {
		t.Fatal(err)
	}
	menu := panel.Object(reg[0], mv.Value().(dbus.ObjectPath))

	want := "Open Rerun | No coworker working | Nothing waits for you | Pause all coworkers | Quit Rerun"
	waittest.Until(t, "the menu: "+want, func() bool { return labels(menuOf(t, menu)) == want })

	// A card for the person shows at once.
	if _, err := ws.Notify.Notify(ctx, notify.Input{AgentID: a.ID, Kind: notify.Question, PauseID: "pa_1", Title: "Which one?"}); err != nil {
		t.Fatal(err)
	}
	want = "Open Rerun | No coworker working | 1 waiting for you | Pause all coworkers | Quit Rerun"
	waittest.Until(t, "the menu: "+want, func() bool { return labels(menuOf(t, menu)) == want })
	tip, _ := item.GetProperty("org.kde.StatusNotifierItem.ToolTip")
	if !strings.Contains(tip.String(), "1 waiting for you") {
		t.Errorf("tooltip %s does not count what waits", tip)
	}

	click := func(label string) {
		t.Helper()
		for _, e := range menuOf(t, menu) {
			if e.label == label {
				if err := menu.Call("com.canonical.dbusmenu.Event", 0, e.id, "clicked", dbus.MakeVariant(""), uint32(0)).Err; err != nil {
					t.Fatalf("click %q: %v", label, err)
				}
				return
			}
		}
		t.Fatalf("no %q in the menu %q", label, labels(menuOf(t, menu)))
	}
	click("Pause all coworkers")
	waittest.Until(t, "Pause all pauses the workspace", ws.Runs.Held)
	want = "Open Rerun | All coworkers paused | 1 waiting for you | Resume all coworkers | Quit Rerun"
	waittest.Until(t, "the menu: "+want, func() bool { return labels(menuOf(t, menu)) == want })
	click("Resume all coworkers")
	waittest.Until(t, "Resume all resumes", func() bool { return !ws.Runs.Held() })

	click("Open Rerun")
	waittest.Recv(t, "Open Rerun shows the window", opened)

	// An update check that found a newer Rerun: the tray offers it, and
	// it opens the window (whose top bar says the rest).
	newer.Store("v1.5.0")
	home.Events().Publish(event.Change{Kind: update.KindChecked})
	want = "Open Rerun | Update available: v1.5.0 | No coworker working | 1 waiting for you | Pause all coworkers | Quit Rerun"
	waittest.Until(t, "the menu: "+want, func() bool { return labels(menuOf(t, menu)) == want })
	click("Update available: v1.5.0")
	waittest.Recv(t, "Update available shows the window", opened)
	click("Quit Rerun")
	waittest.Recv(t, "Quit Rerun quits", quit)

	// Closing the window hides it only while something shows the icon.
	if !tr.shown() {
		t.Error("shown() = false with a watcher and a host")
	}
	if _, err := panel.ReleaseName(watcherName); err != nil {
		t.Fatal(err)
	}
	if tr.shown() {
		t.Error("shown() = true after the watcher left: closing the window would leave no way back")
	}
}
