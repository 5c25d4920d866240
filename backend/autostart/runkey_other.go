//go:build !windows

package autostart

// userRunKey: only Windows has a registry.
func userRunKey() runKey { return nil }
