//go:build !amqpsax_work

package wire

// Counting is false: this build counts nothing (see Work).
const Counting = false
