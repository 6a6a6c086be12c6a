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
	payload     int // the length of a transfer's payload
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

// parseState parses the performatives the connection state follows;
// ok is false for any other, or on a fault (which parse reports).
func parseState(d amqpsax.Descriptor, body []byte, p *perf) bool {
	var err error
	switch d {
	case amqpsax.DescriptorBegin:
		p.begin, err = frame.ParseBegin(body)
	case amqpsax.DescriptorAttach:
		p.attach, err = frame.ParseAttach(body)
	case amqpsax.DescriptorFlow:
		p.flow, err = frame.ParseFlow(body)
	case amqpsax.DescriptorTransfer:
		var payload []byte
		p.transfer, payload, err = frame.ParseTransfer(body)
		p.payload = len(payload)
	case amqpsax.DescriptorDisposition:
		p.disposition, err = frame.ParseDisposition(body)
	case amqpsax.DescriptorDetach:
		p.detach, err = frame.ParseDetach(body)
	default:
		return false
	}
	return err == nil
}
