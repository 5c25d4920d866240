//go:build !linux

package app

// HandOver: on this OS, Wails' single-instance lock hands a second launch
// over to the running window itself, when the window starts.
func HandOver(dataDir string) bool { return false }
