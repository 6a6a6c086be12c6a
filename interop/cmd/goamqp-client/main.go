// Command goamqp-client runs the Azure/go-amqp client of the interop
// corpus (package goamqp) against the broker at $AMQP_ADDR (host:port).
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/amqpsax/amqpsax/interop/goamqp"
)

func main() {
	addr := os.Getenv("AMQP_ADDR")
	if addr == "" {
		addr = "127.0.0.1:5672"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := goamqp.Run(ctx, addr, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "goamqp-client:", err)
		os.Exit(1)
	}
}
