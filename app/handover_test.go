//go:build linux

package app

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/godbus/dbus/v5"

	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

// singleInstance is what Wails' single-instance lock exports on Linux in the
// running window's process.
type singleInstance struct{ got chan string }

func (s *singleInstance) SendMessage(msg string) *dbus.Error {
	s.got <- msg
	return nil
}

// A second launch on a data directory with a window hands over to it (the
// window gets the launch's arguments); on another data directory, or with
// no window running, it does not.
func TestHandOver(t *testing.T) {
	addr := sessionBus(t)
	dir, other := t.TempDir(), t.TempDir()
	if InstanceID(dir) == InstanceID(other) || InstanceID(dir) != InstanceID(dir+"/") {
		t.Fatalf("InstanceID: %q %q %q, want one per directory", InstanceID(dir), InstanceID(dir+"/"), InstanceID(other))
	}
	if HandOver(dir) {
		t.Fatal("HandOver with no window running = true")
	}
	running, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer running.Close()
	id := "wails_app_" + strings.NewReplacer("-", "_", ".", "_").Replace(InstanceID(dir))
	si := &singleInstance{got: make(chan string, 1)}
	if err := running.Export(si, dbus.ObjectPath("/org/"+id+"/SingleInstance"), "org."+id+".SingleInstance"); err != nil {
		t.Fatal(err)
	}
	if _, err := running.RequestName("org."+id+".SingleInstance", dbus.NameFlagDoNotQueue); err != nil {
		t.Fatal(err)
	}
	if HandOver(other) {
		t.Error("HandOver on another data directory = true")
	}
	if !HandOver(dir) {
		t.Fatal("HandOver to the running window = false")
	}
	var data struct {
		Args             []string
		WorkingDirectory string
	}
	if err := json.Unmarshal([]byte(waittest.Recv(t, "the window hears of the launch", si.got)), &data); err != nil {
		t.Fatal(err)
	}
	if wd, _ := os.Getwd(); data.WorkingDirectory != wd || len(data.Args) != len(os.Args)-1 {
		t.Errorf("handed over %+v, want the launch's arguments and directory", data)
	}
}
