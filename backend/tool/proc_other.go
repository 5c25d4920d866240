//go:build !linux

package tool

// procIdentity is "" where the app does not read process start times: such
// commands are not recorded, and what a crash interrupted is not ended at
// the next start (the timeout and a stop still end the whole tree: taskkill
// /T on Windows, the process group elsewhere).
func procIdentity(int) string { return "" }

// EndProcessGroup does nothing here: see procIdentity.
func EndProcessGroup(Process) (int, error) { return 0, nil }
