package bench

import "github.com/amqpsax/amqpsax/frame"

// The performatives of a recorded client stream (see RecordStream).

func appendDriverOpen(b []byte) []byte {
	return frame.AppendOpen(b, frame.Open{ContainerID: []byte("bench-client"),
		MaxFrameSize: frame.Some[uint32](driverMaxFrame), ChannelMax: frame.Some[uint16](15)})
}

func appendDriverBegin(b []byte) []byte {
	return frame.AppendBegin(b, frame.Begin{NextOutgoingID: 0, IncomingWindow: 1 << 20, OutgoingWindow: 1 << 20})
}

func appendDriverAttach(b []byte, settled bool) []byte {
	mode := frame.SndUnsettled
	if settled {
		mode = frame.SndSettled
	}
	return frame.AppendAttach(b, frame.Attach{Name: []byte("bench-sender"), Handle: 0, Role: frame.RoleSender,
		SndSettleMode: frame.Some(mode), InitialDeliveryCount: frame.Some[uint32](0),
		Source: frame.Some(frame.Source{Address: []byte("bench-client")}),
		Target: frame.Some(frame.Target{Address: []byte(DriverAddress)})})
}

func appendDriverTransfer(b []byte, id uint32, tag []byte, settled bool) []byte {
	return frame.AppendTransfer(b, frame.Transfer{Handle: 0, DeliveryID: frame.Some(id), DeliveryTag: tag,
		MessageFormat: frame.Some[uint32](0), Settled: settled})
}
