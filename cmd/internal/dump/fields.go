package dump

import (
	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/frame"
)

// The optional fields of frame's performatives that the connection state
// (conn.go) reads, each behind one accessor: how package frame says
// whether a field was present is kept to this file.

// perf is the parsed performative of a frame, as far as the connection
// state needs it.
type perf struct {
	begin       frame.Begin
	attach      frame.Attach
	flow        frame.Flow
	transfer    frame.Transfer
	disposition frame.Disposition
	detach      frame.Detach
	payload     []byte // a transfer's
	d           amqpsax.Descriptor
	err         error // the fault parsePerf found
}

// remoteChannel returns a begin's remote-channel, if present.
func remoteChannel(b *frame.Begin) (uint16, bool) {
	return b.RemoteChannel.Get()
}

// sndSettleMode returns an attach's snd-settle-mode (mixed when absent).
func sndSettleMode(a *frame.Attach) frame.SenderSettleMode {
	return a.SndSettleMode.Or(frame.SndMixed)
}

// initialDeliveryCount returns a sender's initial-delivery-count, if
// present.
func initialDeliveryCount(a *frame.Attach) (uint32, bool) {
	return a.InitialDeliveryCount.Get()
}

// flowLink returns the link fields of a flow: its handle, delivery-count
// (present or not) and link-credit; ok is false for a session-only flow.
func flowLink(f *frame.Flow) (handle, count uint32, hasCount bool, credit uint32, ok bool) {
	handle, ok = f.Handle.Get()
	count, hasCount = f.DeliveryCount.Get()
	return handle, count, hasCount, f.LinkCredit.Or(0), ok
}

// deliveryID returns a transfer's delivery-id, if present.
func deliveryID(t *frame.Transfer) (uint32, bool) {
	return t.DeliveryID.Get()
}

// dispositionRange returns the first and last delivery id of a
// disposition.
func dispositionRange(d *frame.Disposition) (first, last uint32) {
	return d.Range()
}

// parsePerf parses the performative d at the start of body with package
// frame, whose checks go past the encoding (the type of every field, the
// mandatory ones, the choices of restricted types), once per frame: it
// keeps in p what the connection state, the filters and the joining of
// transfers read, and the fault, if any, in p.err.
func parsePerf(d amqpsax.Descriptor, body []byte, p *perf) {
	var err error
	switch d {
	case amqpsax.DescriptorOpen:
		_, err = frame.ParseOpen(body)
	case amqpsax.DescriptorBegin:
		p.begin, err = frame.ParseBegin(body)
	case amqpsax.DescriptorAttach:
		p.attach, err = frame.ParseAttach(body)
	case amqpsax.DescriptorFlow:
		p.flow, err = frame.ParseFlow(body)
	case amqpsax.DescriptorTransfer:
		p.transfer, p.payload, err = frame.ParseTransfer(body)
	case amqpsax.DescriptorDisposition:
		p.disposition, err = frame.ParseDisposition(body)
	case amqpsax.DescriptorDetach:
		p.detach, err = frame.ParseDetach(body)
	case amqpsax.DescriptorEnd:
		_, err = frame.ParseEnd(body)
	case amqpsax.DescriptorClose:
		_, err = frame.ParseClose(body)
	case amqpsax.DescriptorSASLMechanisms:
		_, err = frame.ParseSASLMechanisms(body)
	case amqpsax.DescriptorSASLInit:
		_, err = frame.ParseSASLInit(body)
	case amqpsax.DescriptorSASLChallenge:
		_, err = frame.ParseSASLChallenge(body)
	case amqpsax.DescriptorSASLResponse:
		_, err = frame.ParseSASLResponse(body)
	case amqpsax.DescriptorSASLOutcome:
		_, err = frame.ParseSASLOutcome(body)
	}
	p.d, p.err = d, err
}
