package replica

import "github.com/rerun-build/rerun-desktop/sync/protocol"

// OpenChange opens a change as the relay stores it, with the workspace's
// sync key: what another device of the workspace would read. Tests use it
// to check what left a device; it refuses what Serve refuses.
func OpenChange(key []byte, workspace string, c protocol.Change) (Record, error) {
	k, err := deriveKeys(key, workspace)
	if err != nil {
		return Record{}, err
	}
	return k.open(c.Key, c.Body)
}

// DeviceID is this device's id ("dev_…").
func (e *Engine) DeviceID() string { return e.cfg.Device }
