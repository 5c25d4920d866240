package app

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"time"

	"github.com/godbus/dbus/v5"
)

// HandOver asks the Rerun window already running on dataDir to show itself
// and reports whether one did; the caller then exits instead of starting a
// second server on the same data. It speaks Wails' single-instance lock on
// Linux (v2.16 internal/frontend/desktop/linux/single_instance.go): the
// running window owns a session-bus name made from its unique id and takes
// the launch's arguments, as JSON, through SendMessage. Wails makes that
// call itself only once its window exists, after the data directory is
// open; asking first keeps the second launch from touching the data.
func HandOver(dataDir string) bool {
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return false // no session bus: no window to hand over to
	}
	defer conn.Close()
	id := "wails_app_" + strings.NewReplacer("-", "_", ".", "_").Replace(InstanceID(dataDir))
	name, path := "org."+id+".SingleInstance", dbus.ObjectPath("/org/"+id+"/SingleInstance")
	wd, _ := os.Getwd()
	msg, _ := json.Marshal(struct {
		Args             []string
		WorkingDirectory string
	}{os.Args[1:], wd})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return conn.Object(name, path).CallWithContext(ctx, name+".SendMessage", 0, string(msg)).Err == nil
}
