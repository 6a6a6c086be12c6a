module github.com/amqpsax/amqpsax/interop

go 1.26

replace github.com/amqpsax/amqpsax => ..

require github.com/Azure/go-amqp v1.7.0
