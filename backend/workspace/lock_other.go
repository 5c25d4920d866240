//go:build !unix

package workspace

// lockDataDir does not lock on this platform yet: running two Rerun
// processes on one data directory there is the user's to avoid.
func lockDataDir(dir string) (release func(), err error) { return func() {}, nil }
