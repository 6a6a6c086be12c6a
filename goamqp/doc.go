// Package amqp is Azure/go-amqp v1.7.0's API on amqpsax: a program or SDK
// built on github.com/Azure/go-amqp (azservicebus, azeventhubs, RabbitMQ
// 4's Go client) switches to it with one line in its go.mod,
//
//	replace github.com/Azure/go-amqp => github.com/amqpsax/amqpsax/goamqp v0.0.0
//
// (or a local path to this directory; until the module is published, a
// local checkout needs github.com/amqpsax/amqpsax replaced by its path
// too), and nothing changes in its source. Conn, Session, Sender and
// Receiver run on package client (one goroutine per connection, none per
// link), messages are encoded with package encode and decoded with
// stream.Cursor.
//
// # Messages
//
// Message, MessageHeader, MessageProperties and the types in their values
// are go-amqp's. MarshalBinary writes the bytes go-amqp v1.7.0 writes,
// byte for byte (maps in Go's map order, as there), and UnmarshalBinary
// gives the Go values go-amqp gives: symbols as strings, a map whose keys
// are all strings or symbols as map[string]any, arrays as typed slices
// ([]int32, []string, []Symbol, []UUID …, nil when empty; a ubyte array
// as a []uint8 of a named type, as go-amqp's internal ArrayUByte), a
// timestamp in the local zone (an array's in UTC), described values as
// *Error, the delivery states or, for other descriptors, a struct of
// Descriptor and Value (go-amqp's internal DescribedType). The module
// goamqp/internal/compat checks both against go-amqp itself.
//
// The package is one package with no internal ones: under the replace
// line it is loaded as github.com/Azure/go-amqp, where an import of its
// own module's path would not resolve. go-amqp's types that live in its
// internal packages (encoding.Filter, buffer.Buffer, ArrayUByte …) are
// unexported types here, out of a program's reach as go-amqp's are.
//
// Two faults of go-amqp's encoder are not copied: an []int32 or []int64
// with an element below -128 is written with the four- or eight-byte
// element code (go-amqp writes it truncated to a byte, so that it reads
// back as another number), and a []time.Time element outside the years
// 1678 to 2262 is written as its UnixMilli (go-amqp's UnixNano overflows).
//
// # Decoding
//
// UnmarshalBinary checks what it reads as amqpsax does: every size, count
// and constructor, and each value whole. Where go-amqp is lenient about
// bytes that break the encoding's rules, this refuses them with an error:
// a boolean byte (0x56) other than 0x00 or 0x01, a compound whose size
// cannot hold its count, a section descriptor that is a ulong above 255
// (go-amqp reads its low byte). A map key that cannot key a Go map (a
// described value holding a slice) is an error here where go-amqp
// panics. go-amqp's own limits hold here too: a list or array of more
// than 65536 elements, or a map of more than 65536 keys and values, and
// an array that claims more elements than its size has bytes (an array
// of true or uint0 can do so in fact) are errors. Whatever this accepts,
// go-amqp accepts too and reads to the same Message (FuzzMessage in
// goamqp/internal/compat).
//
// # Behaviour kept from go-amqp
//
// Send returns nil for the released and modified outcomes, as go-amqp
// does (package client's Send returns an error for them): only a rejected
// message is an error, the peer's *Error. SendWithReceipt's Wait gives
// every outcome as a DeliveryState. With no SASLType and no user in the
// URL, Dial negotiates no SASL, as go-amqp does (client's default is SASL
// ANONYMOUS); a user in the URL means SASL PLAIN whatever SASLType says.
// IdleTimeout is one minute unless set (negative: none). SASL PLAIN and
// XOAUTH2 are sent over plain TCP when asked for, as go-amqp sends them
// (client refuses unless ConnOptions.AllowInsecurePlain). NewSession,
// NewSender and NewReceiver with an ended ctx return its error and send
// nothing; a second link of one name in one direction on a session is
// refused before its attach, with go-amqp's words.
//
// Errors are go-amqp's: a link, session or connection that ended is a
// *LinkError, *SessionError or *ConnError, with RemoteErr the peer's
// *Error when the peer ended it (errors.As finds both, as azservicebus
// and azeventhubs sort failures into link, connection and fatal
// recovery); a call on what this end closed is the scoped error with no
// RemoteErr; Close returns nil for a clean close. A refused TCP or TLS
// dial is the dialler's error, a refused open or SASL exchange a
// *ConnError.
//
// # What behaves differently
//
// Send refuses a message that is not one by the spec, where go-amqp
// sends it as it is: a message-id or correlation-id of another type
// than ulong, UUID, binary or string (go-amqp's documentation restricts
// them to those four), or a body of more than one kind (Value and Data
// both set). Receive takes such messages from peers that send them.
//
// A Receiver's Credit is granted again once half of it is used and
// Receive has taken enough for a quarter of it more (client's prefetch
// with EagerCredit), with messages still on their way, as go-amqp does;
// go-amqp counts messages settled where this package counts messages
// received.
//
// A received Message is decoded once, into go-amqp's types (client hands
// over its bytes undecoded); a sent one is encoded once, as go-amqp
// writes it, and handed to client as bytes (one of data sections alone
// goes to client as its slices, for client to write). Send allocates
// nothing. A received
// Message, its header and properties and what they point to are one
// allocation, and its bytes (the buffer client received them in, handed
// over: Delivery.TakePayload) a second: its data sections, binaries and
// strings are views into them (never written: a binary's capacity ends
// with it), so keeping any of them keeps the message's bytes; annotation
// keys seen before cost nothing, and so do the first five strings that
// need a place of their own (a property's *string, or a string in an
// interface: a message-id, a map's value). Then come the maps and the
// other values Go puts in an interface, as in go-amqp: a message with a
// header, an annotation, a message-id, a content type, a creation time,
// an application property and a data section costs 6 allocations
// (go-amqp's Receive and AcceptMessage, 34); one with a data section
// alone, 2 (go-amqp's, 15): the Message, and a copy of its body of the
// body's size (client's buffer is reused).
//
// # What does not work yet
//
// Package client does not carry these yet, so this package accepts them
// and does not send them, or answers as if the peer sent nothing: they
// come as client grows them.
//
//   - ConnOptions.WriteTimeout; Session.Properties returns nil.
//     SessionOptions.MaxLinks bounds the links here (past it the session
//     ends with go-amqp's *SessionError) but is not sent as the begin's
//     handle-max.
//   - SenderOptions.Capabilities, Durability, ExpiryPolicy,
//     ExpiryTimeout, TargetDurability, TargetExpiryPolicy,
//     TargetExpiryTimeout; ReceiverOptions.Capabilities, Durability,
//     ExpiryPolicy, ExpiryTimeout, SourceDurability,
//     SourceDistributionMode, MaxMessageSize; OnLinkStateProperties and
//     OnDeliveryStateChanged are not called.
//   - Message.DeliveryTag is not sent (the client chooses the tag);
//     SendReceipt.DeliveryTag returns nil. A received Message has it.
//   - ModifyMessage sends the annotations whose keys are strings or
//     symbols, not those with int keys.
//   - SASLTypeExternal with a response makes Dial fail; the amqp://
//     scheme with ConnOptions.TLSConfig does not negotiate TLS inside
//     AMQP (use amqps://).
//
// What client carries is passed on: connection and link properties
// (sent, and the peer's through Conn.Properties, Sender.Properties,
// Receiver.Properties), MaxSessions, desired capabilities, the
// terminus capabilities client has (SenderOptions.TargetCapabilities,
// ReceiverOptions.SourceCapabilities), source and target addresses,
// dynamic nodes, filters and LinkSourceFilterValue, the source's expiry
// policy and timeout, both settle modes (ReceiverSettleModeSecond
// included), Message.Format, RejectMessage's Info, SASL XOAUTH2.
package amqp
