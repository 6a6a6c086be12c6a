// Package bench measures amqpsax against other implementations of the
// same work: Azure/go-amqp, Qpid Proton-C (build tag proton),
// encoding/json and tinylib/msgp. It is its own module so that the main
// module never depends on them.
//
// Workloads are AMQP messages built with fixed seeds from Go values (the
// model) by amqpsax's encode package. Impls lists every implementation
// of every task (Decode, Skip, Encode, Route); the benchmarks in
// bench_test.go run each on each workload, and TestImpls runs each once
// and checks what it produced against the model, so that every number
// compares like with like. Receivers and Senders set amqpsax's protocol
// engine beside Proton-C's connection driver, receiving a client's
// recorded stream (driver.go) and sending to a server's (send.go), in
// memory; engine-perf.sh counts their instructions per message and
// engine-time.sh times them. See README.md; run.sh writes RESULTS.md.
package bench
