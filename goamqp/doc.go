// Package amqp is Azure/go-amqp v1.7.0's API on amqpsax: a program or SDK
// built on github.com/Azure/go-amqp switches to it with one line in its
// go.mod,
//
//	replace github.com/Azure/go-amqp => github.com/amqpsax/amqpsax/goamqp v0.0.0
//
// and nothing else changes in its source.
package amqp
