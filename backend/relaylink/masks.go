package relaylink

import "github.com/rerun-build/rerun-desktop/backend/secret"

// maskRelay has vars mask the secrets of the workspace's relay link (none
// when l is nil: unlinked).
func maskRelay(vars *secret.Variables, l *relayLink) {
	if vars == nil {
		return
	}
	var values map[string]string
	if l != nil {
		values = map[string]string{"RELAY_SECRET": l.Secret, "RELAY_SYNC_KEY": string(l.SyncKey)}
	}
	vars.Mask("relay", values)
}
