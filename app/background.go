package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rerun-build/rerun-desktop/backend/prefs"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// hintFile marks, in the data directory, that the person was told once
// that closing the window keeps Rerun running.
const hintFile = "background-hint-shown"

// backgroundHint tells the person, the first time the window closes into
// the tray, that the coworkers keep working and where Rerun went. It is
// shown once per data directory; a hint that could not be shown is tried
// again at the next close.
func backgroundHint(dataDir string, send sendFunc) error {
	mark := filepath.Join(dataDir, hintFile)
	if _, err := os.Stat(mark); err == nil {
		return nil
	}
	if err := send("rerun-background", "Rerun keeps working",
		"Your coworkers keep working in the background. Open Rerun, pause them or quit from its icon in the tray."); err != nil {
		return err
	}
	return os.WriteFile(mark, []byte("shown\n"), 0o600)
}

// closeAction is what closing the window does.
type closeAction int

const (
	closeHide   closeAction = iota // hide it; the coworkers keep working
	closeQuit                      // quit, asking first when coworkers work
	closeAnyway                    // let it close: quitting was decided
)

// onClose decides what closing the window does: once quitting was
// decided (the tray's Quit, a confirmed question) it closes; with a tray
// icon to come back through and the person's choice "keep working in the
// background", it hides; otherwise it quits.
func onClose(quitting, trayShown bool, whenClosed string) closeAction {
	switch {
	case quitting:
		return closeAnyway
	case trayShown && whenClosed != prefs.Quit:
		return closeHide
	}
	return closeQuit
}

// working counts the runs in flight over every open workspace.
func working(ctx context.Context, home *workspace.Home) int {
	if home == nil {
		return 0
	}
	n := 0
	for _, info := range home.List() {
		w, err := home.Workspace(info.ID)
		if err != nil {
			continue
		}
		if k, err := w.Runs.Working(ctx); err == nil {
			n += k
		}
	}
	return n
}

// quitQuestion is what quitting asks while n coworkers' runs are in
// flight, as a yes/no question (Linux's dialog has only Yes and No); none
// in flight asks nothing.
func quitQuestion(n int) (title, message string, ask bool) {
	if n <= 0 {
		return "", "", false
	}
	who := "1 coworker is"
	if n > 1 {
		who = fmt.Sprintf("%d coworkers are", n)
	}
	return "Quit Rerun?", who + " working right now. Quit anyway?\n\n" +
		"What they are doing stops now and picks up where it left off the next time Rerun starts.", true
}
