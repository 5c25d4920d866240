//go:build windows

package tool

import "errors"

func mkfifo(path string) error { return errors.New("no FIFOs on Windows") }
