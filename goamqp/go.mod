module github.com/amqpsax/amqpsax/goamqp

go 1.26

require github.com/amqpsax/amqpsax v0.0.0

replace github.com/amqpsax/amqpsax v0.0.0 => ../
