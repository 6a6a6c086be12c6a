package compat

import (
	"fmt"
	"testing"

	goamqp "github.com/Azure/go-amqp"
	ours "github.com/amqpsax/amqpsax/goamqp"
)

// theirUnmarshal is go-amqp's UnmarshalBinary with its panics (a map key
// that cannot key a Go map) turned into errors.
func theirUnmarshal(b []byte) (m goamqp.Message, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("go-amqp panicked: %v", r)
		}
	}()
	err = m.UnmarshalBinary(b)
	return m, err
}

// FuzzMessage decodes the same bytes with go-amqp and with ours. Where
// ours accepts, go-amqp accepts too and the two messages are the same,
// type by type; both re-encode, or neither does; and go-amqp reads ours
// re-encoded as the message, or as it reads its own re-encoding. Where
// go-amqp accepts and ours refuses, the input breaks a rule of the AMQP
// encoding that go-amqp does not check (see "Decoding" in the package
// documentation of amqp): lenient is allowed there, never the other way
// round.
func FuzzMessage(f *testing.F) {
	for _, m := range corpus() {
		if b, err := m.MarshalBinary(); err == nil && len(b) < 4096 {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var o ours.Message
		oerr := o.UnmarshalBinary(b)
		g, gerr := theirUnmarshal(b)
		if oerr != nil {
			return
		}
		if gerr != nil {
			t.Fatalf("ours accepts what go-amqp refuses (%v): %x", gerr, b)
		}
		if a, b := dump(o), dump(g); a != b {
			t.Fatalf("decoded messages differ\n ours    %s\n go-amqp %s", a, b)
		}
		ob, oerr := o.MarshalBinary()
		gb, gerr := g.MarshalBinary()
		if (oerr == nil) != (gerr == nil) {
			t.Fatalf("re-encoding: ours %v, go-amqp's %v", oerr, gerr)
		}
		if oerr != nil {
			return
		}
		// go-amqp reads our re-encoding as the message, or as it reads
		// its own re-encoding (a null data section comes back empty);
		// not the latter alone: go-amqp writes an array element below
		// -128 truncated (see smallOr in marshal.go).
		back, err := theirUnmarshal(ob)
		if err != nil {
			t.Fatalf("go-amqp cannot read our re-encoding: %v", err)
		}
		own, _ := theirUnmarshal(gb)
		if a := dump(back); a != dump(g) && a != dump(own) {
			t.Fatalf("go-amqp reads our re-encoding as another message\n ours    %s\n go-amqp %s", a, dump(g))
		}
	})
}
