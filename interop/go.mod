module github.com/amqpsax/amqpsax/interop

go 1.26

replace github.com/amqpsax/amqpsax => ..

replace github.com/amqpsax/amqpsax/ws => ../ws

require (
	github.com/Azure/go-amqp v1.7.0
	github.com/amqpsax/amqpsax v0.0.0
	github.com/amqpsax/amqpsax/ws v0.0.0-00010101000000-000000000000
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/coder/websocket v1.8.14 // indirect
	github.com/google/uuid v1.6.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)
