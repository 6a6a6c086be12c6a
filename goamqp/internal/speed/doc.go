// Package speed is a go-amqp program, written against
// github.com/Azure/go-amqp v1.7.0's exported API and nothing else, whose
// benchmarks are built twice by run.sh: as they are (go.mod, go-amqp
// itself) and with go-amqp replaced by goamqp (goamqp.mod: go.mod with
// the replace line, and one for this repository's unpublished module;
// the source unchanged), then run interleaved against
// examples/broker and compared with benchstat.
//
// The benchmarks, each with two messages (sub-benchmarks msg=data, a
// 1 KiB body alone as amqp.NewMessage makes it, and msg=full, a header,
// message annotations, properties, application properties and the same
// body, as an Azure Service Bus or Event Hubs client sends one):
//
//   - BenchmarkSend64: 64 goroutines sending on one Sender with the
//     blocking Send (each waits for the message's outcome), as a service
//     shares one Sender per entity among its request handlers (go-amqp
//     documents a Sender as safe for concurrent use; azservicebus shares
//     one). Each goroutine sends its own Message again and again. The
//     target is a fan-out address with no consumer, so the broker
//     accepts and drops each message: its cost is the same for both
//     builds and nothing piles up.
//   - BenchmarkReceiveAccept: one Receiver with credit 256, Receive then
//     AcceptMessage in a loop, over b.N messages put on a queue of its
//     own (by a Sender on another connection) before the timer starts.
//
// Each reports msgs/s and, on Linux, the CPU time per message of its
// process and of the broker, and its system calls per message
// (measure_linux_test.go).
//
// The broker's address comes from the SPEED_BROKER environment variable
// (amqp://HOST:PORT); without it the benchmarks are skipped. Run it with
//
//	bash goamqp/internal/speed/run.sh
package speed
