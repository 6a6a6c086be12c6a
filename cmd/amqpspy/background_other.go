//go:build !linux

package main

// background is a no-op where a thread's priority cannot be set (see
// background_linux.go).
func background() {}
