module github.com/amqpsax/amqpsax/goamqp

go 1.26

require github.com/amqpsax/amqpsax v0.0.0

require github.com/google/uuid v1.6.0 // indirect

replace github.com/amqpsax/amqpsax v0.0.0 => ../
