//go:build !desktop

package app

import "context"

// Run reports that this build has no window.
func Run(ctx context.Context, o Options) error { return ErrNoWindow }

// HasWindow says this build can open a window.
const HasWindow = false
