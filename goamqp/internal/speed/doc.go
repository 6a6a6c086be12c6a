// Package speed is a go-amqp program, written against
// github.com/Azure/go-amqp v1.7.0's exported API and nothing else, whose
// benchmarks are built twice by run.sh: as they are (go.mod, go-amqp
// itself) and with go-amqp replaced by goamqp (goamqp.mod: the same
// source, one replace line), then run interleaved against
// examples/broker and compared with benchstat.
//
// The benchmarks, each with the message of benchMessage (a header,
// message annotations, properties, application properties and a 1 KiB
// body, as an Azure Service Bus or Event Hubs client sends one):
//
//   - BenchmarkSend64: 64 goroutines sending on one Sender with the
//     blocking Send (each waits for the message's outcome), as a service
//     shares one Sender per entity among its request handlers (go-amqp
//     documents a Sender as safe for concurrent use; azservicebus shares
//     one). The target is a fan-out address with no consumer, so the
//     broker accepts and drops each message: its cost is the same for
//     both builds and nothing piles up.
//   - BenchmarkReceiveAccept: one Receiver with credit 256, Receive then
//     AcceptMessage in a loop, over b.N messages put on a queue of its
//     own before the timer starts.
//
// The broker's address comes from the SPEED_BROKER environment variable
// (amqp://HOST:PORT); without it the benchmarks are skipped. Run it with
//
//	bash goamqp/internal/speed/run.sh
package speed
