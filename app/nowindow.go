//go:build !desktop

package app

import "context"

// Run reports that this build has no window.
func Run(ctx context.Context, o Options) error { return ErrNoWindow }

// HasWindow says this build can open a window.
const HasWindow = false

// PickFolder reports that this build has no window to show a dialog over.
func PickFolder(context.Context, string, string) (string, error) { return "", ErrNoWindow }
