package app

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
)

// InstanceID names the one window of a data directory: a second launch on
// the same directory hands over to the running window (Wails'
// single-instance lock; HandOver), one on another directory starts its own.
func InstanceID(dataDir string) string {
	if abs, err := filepath.Abs(dataDir); err == nil {
		dataDir = abs
	}
	sum := sha256.Sum256([]byte(dataDir))
	return "build.rerun.desktop.i" + hex.EncodeToString(sum[:8])
}
