//go:build race

package main

// raceEnabled: the race detector's shadow memory makes the resident set
// no measure of amqpdump's own.
const raceEnabled = true
