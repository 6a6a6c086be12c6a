//go:build amqpsax_work

package wire

// Counting is true: this build counts work in Work.
const Counting = true
