// Package compat holds the tests that compare package amqp
// (github.com/amqpsax/amqpsax/goamqp) with Azure/go-amqp v1.7.0 itself:
// a module of its own, so that the goamqp module never depends on
// go-amqp. Run them with
//
//	cd goamqp/internal/compat && go test ./...
package compat
