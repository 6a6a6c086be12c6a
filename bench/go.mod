module github.com/amqpsax/amqpsax/bench

go 1.26.0

require (
	github.com/Azure/go-amqp v1.7.0
	github.com/amqpsax/amqpsax v0.0.0
	github.com/google/uuid v1.6.0
	github.com/tinylib/msgp v1.6.5
	golang.org/x/perf v0.0.0-20260908200009-22c9c6c9d4da
)

require (
	github.com/aclements/go-moremath v0.0.0-20210112150236-f10218a38794 // indirect
	github.com/philhofer/fwd v1.2.0 // indirect
)

replace github.com/amqpsax/amqpsax => ..
