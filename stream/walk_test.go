package stream

import (
	"github.com/amqpsax/amqpsax"
)

// walk reports the values of the cursor's current level, and everything
// in them, to h as the push decoder would (through Emit): the bridge that
// lets the tests compare a cursor walk with dispatch event for event.
func walk(c *Cursor, h amqpsax.Handler) error {
	for c.Next() {
		if err := c.Emit(h); err != nil {
			return err
		}
	}
	return c.Err()
}
