package bench

import "github.com/amqpsax/amqpsax/frame"

// The performatives of a recorded client stream (see RecordStream).

func appendDriverOpen(b []byte) []byte {
	return frame.AppendOpen(b, frame.Open{ContainerID: []byte("bench-client"), MaxFrameSize: driverMaxFrame, ChannelMax: 15})
}

func appendDriverBegin(b []byte) []byte {
	return frame.AppendBegin(b, frame.Begin{NextOutgoingID: 0, IncomingWindow: 1 << 20, OutgoingWindow: 1 << 20})
}

func appendDriverAttach(b []byte, settled bool) []byte {
	a := frame.Attach{Name: []byte("bench-sender"), Handle: 0, Role: frame.RoleSender,
		SndSettleMode: frame.SndUnsettled, InitialDeliveryCount: 0,
		Source: frame.Source{Address: []byte("bench-client")},
		Target: frame.Target{Address: []byte(DriverAddress)}}
	if settled {
		a.SndSettleMode = frame.SndSettled
	}
	a.Set(frame.AttachSndSettleMode)
	a.Set(frame.AttachInitialDeliveryCount)
	return frame.AppendAttach(b, a)
}

func appendDriverTransfer(b []byte, id uint32, tag []byte, settled bool) []byte {
	t := frame.Transfer{Handle: 0, DeliveryID: id, DeliveryTag: tag, Settled: settled}
	t.Set(frame.TransferDeliveryID)
	t.Set(frame.TransferMessageFormat)
	return frame.AppendTransfer(b, t)
}
