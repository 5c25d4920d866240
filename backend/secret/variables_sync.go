package secret

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Device sync carries a variable's value only when the person opted in,
// and only inside a record sealed end to end with the workspace's sync
// key. Each device seals the value with its own data key at rest, so the
// stored form cannot travel as it is: Export opens it, Import seals it
// again for this device, Reload takes what sync wrote into memory.

// Export opens the stored, sealed value of name (a row about to be synced).
// The error never carries the value.
func (v *Variables) Export(name, sealed string) (string, error) {
	if !validName(name) {
		return "", fmt.Errorf("variable name %s is not valid", quoteSnippet(name))
	}
	plain, err := v.box.Open(sealed, v.label(name))
	if err != nil {
		return "", fmt.Errorf("open variable %s: %w", name, err)
	}
	return plain, nil
}

// Import checks a value that arrived from another device for name and
// seals it with this device's key, as the variables table stores it.
func (v *Variables) Import(name, value string) (string, error) {
	switch {
	case !validName(name):
		return "", fmt.Errorf("variable name %s is not valid", quoteSnippet(name))
	case len(stripBreaks(value)) < minMaskable || len(value) > maxValue:
		return "", fmt.Errorf("the value of %s is %d bytes: outside what a variable holds", name, len(value))
	}
	return v.box.Seal(value, v.label(name)), nil
}

// Reload reads name again after sync wrote (or deleted) its row, so runs
// resolve and mask the new value.
func (v *Variables) Reload(ctx context.Context, name string) error {
	v.write.Lock()
	defer v.write.Unlock()
	var sealed, stored string
	err := v.db.QueryRowContext(ctx, `SELECT value, hosts FROM variables WHERE name = ?`, name).Scan(&sealed, &stored)
	if errors.Is(err, sql.ErrNoRows) {
		v.changed(func(m map[string]string, h map[string][]string) { delete(m, name); delete(h, name) })
		return nil
	}
	if err != nil {
		return fmt.Errorf("reload variable %s: %w", quoteSnippet(name), err)
	}
	plain, err := v.box.Open(sealed, v.label(name))
	if err != nil {
		return fmt.Errorf("reload variable %s: %w", quoteSnippet(name), err)
	}
	hosts := decodeHosts(stored)
	v.changed(func(m map[string]string, h map[string][]string) {
		m[name] = plain
		if len(hosts) > 0 {
			h[name] = hosts
		} else {
			delete(h, name)
		}
	})
	return nil
}

// SealFor seals value as the variable name of workspace workspaceID stores
// it under box: how a restored backup's values are sealed again with this
// machine's key.
func SealFor(box *Box, workspaceID, name, value string) (string, error) {
	return (&Variables{box: box, ws: workspaceID}).Import(name, value)
}
