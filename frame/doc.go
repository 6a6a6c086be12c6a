// Package frame is the protocol layer of AMQP 1.0 above its type system:
// the frames of a connection (part 2 §2.3), the performatives they carry
// (part 2 §2.7) and the SASL frames (part 5 §5.3), decoded into typed
// structs without allocating, written back by Append functions, and the
// transfers of each delivery joined into its message.
//
// # Contract
//
// A [Reader] splits a connection's byte stream, such as a [net.Conn], into
// frames and protocol headers, in stream order, through one buffer:
//
//	r := frame.NewReader(conn)
//	for {
//		f, err := r.Next()      // io.EOF at a clean end
//		…
//		switch d, _ := frame.Performative(f.Body); d {
//		case amqpsax.DescriptorTransfer:
//			t, payload, err := frame.ParseTransfer(f.Body)
//			d, done, err := assembler.Add(f.Channel, t, payload) // or a Join per link
//			…
//		}
//	}
//
// A caller that holds the stream's bytes itself (an event loop, a sans-IO
// engine) splits them where they lie with [Split], which returns the first
// header or frame of a byte slice as a view into it and the bytes it
// takes, n 0 while the slice holds only a prefix of one:
//
//	for {
//		f, n, err := frame.Split(buf, maxFrameSize)
//		if err != nil || n == 0 { … }  // a bad header; or keep buf and read more
//		…
//		buf = buf[n:]
//	}
//
// The Reader splits with it: the two accept the same streams and refuse
// them with the same errors. Where a protocol header must come (the start
// of a connection, after a SASL outcome), [SplitHeader] reads it and
// refuses anything else from its first byte ([ErrNotHeader]), without
// waiting for a frame's worth of bytes.
//
// A protocol header ("AMQP" and an id: 0 AMQP, 2 TLS, 3 SASL) is a Frame
// with IsHeader set; a heartbeat is an AMQP frame with an empty Body.
// [Performative] tells which performative a body holds; [ParseOpen],
// [ParseBegin], [ParseAttach], [ParseFlow], [ParseTransfer], [ParseDisposition],
// [ParseDetach], [ParseEnd], [ParseClose] and the five ParseSASL…
// functions decode it; [ParseTransfer] also returns the payload after it.
// [Source], [Target] (or a transaction coordinator), [AMQPError] and the
// delivery states (received, accepted, rejected, released, modified; any
// other described value is kept raw as [StateOther]) are decoded as part of
// the performatives that hold them. Part 4's values are decoded on their
// own: a [StateOther]'s Raw by [ParseDeclared] and
// [ParseTransactionalState], the described value in the amqp-value of a
// controller's message by [ParseDeclare] and [ParseDischarge]; a state alone,
// as an attach's unsettled map holds them, by [ParseDeliveryState].
//
// Every field is read through a [github.com/amqpsax/amqpsax/stream.Cursor] and checked against the
// spec's type for it. Go's zero value and AMQP's "absent" are different
// things, and the types say which is which (see [Opt]):
//
//   - A field that may be absent and whose zero means something of its own
//     (handle, delivery-id, delivery-count, link-credit, next-incoming-id,
//     remote-channel, message-format, initial-delivery-count), or whose
//     spec default is not the zero value (max-frame-size, channel-max,
//     handle-max, snd-settle-mode), is an [Opt]: absent unless built with
//     [Some], present when it was on the wire. [Opt.Or] applies the spec's
//     default ([SpecChannelMax], [SpecHandleMax],
//     [SpecSndSettleMode]). Attach's Source and Target are Opts too: a
//     refusing link end sends null.
//   - Mandatory fields are plain and always written.
//   - The other fields are plain, and their zero value is the spec's
//     default (false, rcv-settle-mode first, expiry-policy session-end,
//     durability none, timeout 0) or absence (nil bytes, Map, [Symbols];
//     [StateNone]; an [AMQPError] without a condition): they are written when
//     they differ from it.
//
// So the obvious struct literal sends what it says:
//
//	frame.Flow{NextIncomingID: frame.Some[uint32](0), IncomingWindow: 100,
//		NextOutgoingID: 0, OutgoingWindow: 100, Handle: frame.Some[uint32](0),
//		DeliveryCount: frame.Some[uint32](0), LinkCredit: frame.Some[uint32](0)}
//
// stops link 0's sender, and a Flow without Handle is a session's flow.
// Every struct embeds [Fields], the record of what a Parse function saw:
// which fields were on the wire (Has), how many list elements, list8 or
// list32. Enumerated fields have types with String methods: [Role],
// [SenderSettleMode], [ReceiverSettleMode], [TerminusDurability], [ExpiryPolicy],
// [SASLCode], and [Condition] for the error conditions. Maps (properties,
// filter, info, …) are [Map] and fields of symbols that may repeat
// (capabilities, locales, mechanisms) are [Symbols]: their encodings as they
// are on the wire (one symbol, an array of symbols, or the list of symbols
// Qpid Proton's python binding writes), read with their methods
// ([Map.Lookup], [Map.All], [Symbols.All], [Symbols.Contains]) or a
// [github.com/amqpsax/amqpsax/stream.Cursor].
//
// A receiver's hot path reads a transfer with [ParseTransferHead] (or
// [TransferHead.Parse] into a TransferHead it keeps): handle, delivery-id,
// delivery-tag, message-format, settled and more in one pass, with no
// [Transfer] built, for the plain encodings peers write; when it says no
// (ok false: a state, aborted, another encoding, a fault), [ParseTransfer]
// decodes the transfer and names the fault. The two agree on every body
// the first takes.
//
// Only a transfer carries a payload: [ParseTransfer] returns it. The other
// Parse functions refuse bytes after their performative
// ([github.com/amqpsax/amqpsax.ErrTrailing]). A body is a whole frame's,
// so a value that runs past its end is
// [github.com/amqpsax/amqpsax.ErrOverrun], never [io.ErrUnexpectedEOF]: a
// complete frame is never "cut".
//
// [AppendOpen] … [AppendSASLOutcome] write a performative in the smallest
// encodings, exactly what the struct says and what its [Fields] record;
// [BeginFrame] and [EndFrame] put a frame around it, [AppendFrame] writes a
// [Frame] as read. Parse then Append is a fixed point: a performative
// decoded and written back gives the bytes it was decoded from and parses
// to the same struct, for every frame every peer in testdata/ wrote (Qpid
// Proton, go-amqp, rhea, uAMQP-C, RabbitMQ; [Fields] remembers the
// trailing nulls and list32s Proton writes).
//
// A [Join] joins the transfers of the delivery in progress on one link
// (part 2 §2.6.12): a delivery in one transfer comes back as a view of it,
// with no copy; the payloads of one in several are copied into a buffer
// the Join reuses. Settlement on any transfer settles the delivery; an
// aborted delivery is dropped. A receiver that keeps its links keeps a
// Join beside each ([Join.Held] tells its memory); an [Assembler] is a map
// of Joins keyed by channel and link handle, for a program that reads
// frames without keeping links. The rules are the Join's, written once.
// To read the sections of a delivery's first transfers before the rest
// arrives, scan what has been joined with
// [github.com/amqpsax/amqpsax/message.Scan]: on a prefix it returns the
// complete sections and an error wrapping [io.ErrUnexpectedEOF].
//
// # Lifetimes
//
// A Frame's Body and Ext are views into the [Reader]'s buffer, valid until
// the next Next (or Reset); [Split]'s, into the slice it was given. Everything a Parse function returns that is
// bytes (strings, symbols, binaries, Map, [Symbols], the payload, a
// [StateOther]'s Raw) is a view into the body it was given, valid as long
// as that body is: copy what must outlive the frame. A [Delivery]'s Payload
// and DeliveryTag are views into the frame for a delivery of one
// transfer, else into the [Join]'s buffer, valid until the next Add or
// Reset (for an [Assembler]: Add, Forget or Reset). Nothing is allocated
// per frame once the [Reader]'s buffer and the Joins' buffers have grown
// to the largest frame and message seen.
//
// # Errors
//
// A [Reader] reports a fault in the stream as a *[ReadError] with the offset
// of the frame at fault in the stream: [io.ErrUnexpectedEOF] when the
// stream ends inside a frame, [ErrFrameTooLarge], [ErrFrameSize] or
// [ErrDataOffset] for a frame header that cannot be right (these stay: the
// stream cannot be split any further), [ErrEncrypted] after a TLS header.
// Errors of the underlying reader are returned as they are, and Next may
// be called again after them. [Split] reports the same faults of a frame
// header, with an Offset relative to its slice; a slice that ends inside
// a frame is not a fault there (n is 0: more may come). [SplitHeader]
// reports bytes that are no protocol header as [ErrNotHeader].
//
// Parse functions report a fault as an
// *[github.com/amqpsax/amqpsax.Error] with Op "frame" and the offset in the body of the value at fault. A field of the wrong type,
// a missing mandatory field, a value outside a restricted type's choices
// and a body that holds another performative have a *[FieldError] as the
// Error's Err, naming the type and field, and wrapping [ErrFieldType],
// [ErrMissingField], [ErrFieldValue] or [ErrPerformative]. A malformed
// encoding has the causes of package amqpsax, each wrapping
// [github.com/amqpsax/amqpsax.ErrMalformed]: a value cut short by the end
// of the body is [github.com/amqpsax/amqpsax.ErrOverrun], never
// [io.ErrUnexpectedEOF], since a body is a whole frame's. Fields beyond
// those the spec defines, which a later version may add, are skipped.
//
// A [Join] reports a *[DeliveryError] naming the handle and delivery, an
// [Assembler] the channel too: [ErrMessageTooLarge], [ErrTooManyPending]
// (an Assembler's only), [ErrDeliveryID],
// [ErrNoDeliveryID].
//
// # Limits
//
// Reader.MaxFrameSize, and Split's maxFrameSize ([DefaultReaderMaxFrameSize], 1 MiB, when 0), bound a frame;
// a larger size, a size below 8 or a data offset below 2 is refused from
// the frame's 8-byte header, before anything more is read or allocated.
// Below the limit the buffer grows only as bytes arrive (doubling), so a
// frame that claims 4 GiB and stops costs what was sent, not what was
// claimed. Join.Add's maxSize and Assembler.MaxMessageSize
// ([DefaultMaxMessageSize], 64 MiB) bound a joined message, checked
// before each copy; MaxPending
// ([DefaultMaxPending]) bounds the deliveries joined at once. Parse
// functions do work in proportion to the body: each map and array of
// symbols is walked once, at its top level, to check it.
//
// # Spec references
//
// OASIS AMQP 1.0: part 2 §2.2 (protocol header), §2.3 (frames), §2.4.5
// (idle time-out and empty frames), §2.6.12 (transferring a message),
// §2.7 (performatives), §2.8 (definitions: role, settle modes, error,
// error conditions); part 3 §3.4 (delivery states), §3.5 (source,
// target, durability, expiry policy); part 4 §4.5 (coordinator, declare,
// discharge, declared, transactional-state); part 5
// §5.2 (TLS), §5.3 (SASL). The field tables are checked against the spec's
// XML (see specgen.go).
package frame
