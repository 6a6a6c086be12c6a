module github.com/amqpsax/amqpsax/goamqp/internal/speed

go 1.26

require github.com/Azure/go-amqp v1.7.0

require (
	github.com/amqpsax/amqpsax v0.0.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
)

// goamqp in go-amqp's place: the replace lines (and the requirements
// they bring) are all that differs from go.mod.
replace github.com/Azure/go-amqp => ../..

// goamqp requires this repository's module, unpublished.
replace github.com/amqpsax/amqpsax => ../../..
