module github.com/amqpsax/amqpsax/cmd

go 1.26

require (
	github.com/Azure/go-amqp v1.7.0
	github.com/amqpsax/amqpsax v0.0.0
	github.com/google/gopacket v1.1.19
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/google/uuid v1.6.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/net v0.0.0-20190620200207-3b0461eec859 // indirect
	golang.org/x/sys v0.0.0-20190412213103-97732733099d // indirect
)
