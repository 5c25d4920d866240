package app

import (
	"os"
	"path/filepath"
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
