module github.com/amqpsax/amqpsax/goamqp/internal/compat

go 1.26

require (
	github.com/Azure/go-amqp v1.7.0
	github.com/amqpsax/amqpsax v0.0.0
	github.com/amqpsax/amqpsax/goamqp v0.0.0
)

require github.com/google/uuid v1.6.0 // indirect

replace github.com/amqpsax/amqpsax/goamqp v0.0.0 => ../..

replace github.com/amqpsax/amqpsax v0.0.0 => ../../..
