// Package engine speaks AMQP 1.0: the conversation above the frames
// (OASIS AMQP 1.0 part 2 §2.4–§2.8, part 5 §5.3) as a state machine with
// no I/O of its own, in the manner of Qpid Proton's connection driver and
// Python's h11. The caller feeds a Conn the bytes it read and the time,
// and writes out the bytes it returns, so one engine serves net.Conn, TLS,
// an event loop or a test's byte slices; tests need no sleeps. Events
// reach a [Handler], as values reach an
// [github.com/amqpsax/amqpsax.Handler]: embed [NopHandler] to
// implement only the ones you need.
//
// # Contract
//
// A [Conn] is a server ([NewServer]) or a client ([NewClient]) end. The legal
// calls, in a loop until Done:
//
//	c.Feed(bytesRead, now)     // frames in: events fire
//	out := c.Output()          // bytes to write
//	c.Written(n)               // n of them written
//	next := c.Tick(now)        // heartbeats and idle time-out; call again by next
//	c.CloseRead()              // the peer's stream ended (ReadFailed(err): how)
//
// plus the actions of the application, in events or between the calls:
// [Conn.Begin] and [Conn.Close]; [Session.AttachSender],
// [Session.AttachReceiver] and [Session.End]; [Link.Flow],
// [Link.KeepCredit], [Link.SetCreditor], [Link.DrainCredit], [Link.Send],
// [Link.SendWith], [Link.SetDeliveryContext], [Link.Dispose]
// ([Delivery.Accept], Reject, Release, Modify, Settle), [Link.Settle] and
// [Link.Detach]. Package driver does that loop over a net.Conn (see
// Driver below).
//
// # Driver
//
// The engine does no I/O. Package github.com/amqpsax/amqpsax/driver runs
// it over a net.Conn (driver.Driver: the reader, writer and timers, TLS
// by protocol header), serves a listener (driver.Server, driver.Serve)
// and dials a client (driver.Dial), on the engine's exported API alone:
// what it relies on is written here — the view Output returns stays as
// it was until Written ([Conn.Output]), [Conn.Phase] tells the TLS
// upgrade from direct TLS ([Conn.UpgradeTLS], [Conn.DirectTLS]), and
// [Conn.SetDriver] keeps a Driver with its Conn for driver.Of.
//
// # State
//
// Each Conn, Session and Link holds one state of two halves (after Qpid
// Proton's pn_endpoint_t): what this end has sent — nothing yet, its
// open, begin or attach (active), its close, end or detach (closed) —
// and the same of the peer. Every public action checks it once: an
// action is legal while this end's half of the object and of every
// object above it is active, so once this end has sent its close, end
// or detach, or before it has sent its open, begin or attach, the action
// returns [ErrState] and writes nothing. (Send also needs the peer's
// attach: it needs credit.) The peer's close, end or detach is answered
// at once, so an object whose peer has closed its half is over: both
// halves closed, unmapped, its events reported. A test walks every
// action through every state (state_test.go).
//
// The engine answers on its own what the protocol asks of it: protocol
// headers, SASL (mechanisms as plug-ins in both roles: ANONYMOUS,
// PLAIN, EXTERNAL, SCRAM-SHA-256, XOAUTH2 built in; a server's
// [Authenticator] offers and decides, a client's [Config].SASL lists
// its preference), the open (max-frame-size, channel-max, idle-time-out),
// a peer's begin and attach (mirroring its source and target and settle
// modes), a peer's end, detach and close, flows with echo, drains,
// session windows (§2.5.6), heartbeats at half the peer's idle time-out.
// Configured, it also grants credit ([Config].Credit), accepts deliveries
// ([Config].AutoAccept) and settles outgoing deliveries on the peer's
// terminal outcome (unless [Config].ManualSettle). So a server that takes
// messages is:
//
//	driver.Serve(ln, engine.Config{Credit: 100, AutoAccept: true}, handler)
//
// # Order of events
//
// Each event follows the transition it reports; the transition is
// complete (the engine's answer is in Output) when the handler runs. For
// one connection:
//
//   - OnConnectionOpen, once, after both opens (the server answers the
//     client's open first). Nothing of sessions comes before it.
//   - OnSessionBegin for a session, after the peer's begin (an answer to
//     Begin, or a new session the engine has answered).
//   - OnLinkAttach for a link of a begun session, after the peer's
//     attach (an answer to AttachSender/AttachReceiver, or a new link
//     the engine has answered). A receiver's automatic credit is granted
//     after it returns. Before the engine answers a peer's attach, a
//     Handler that implements [Answerer] decides the answer's terminus
//     (a dynamic node's address, an expiry policy) or refuses the link,
//     or holds the answer (Link.AnswerLater) until it calls Link.Answer:
//     OnLinkAttach then comes from Answer, followed by an OnFlow when the
//     peer granted credit meanwhile. One that implements [Recoverer]
//     gives the answer's unsettled map.
//   - Then, for an attached link, in the order of the frames: OnFlow
//     (peer's flow), OnDelivery (each delivery once its last transfer
//     has arrived, in order of arrival on the connection), OnDisposition
//     (per delivery in a disposition's range, in id order, once the whole
//     range has been applied: settled deliveries forgotten, and a
//     terminal outcome the peer did not settle settled by this end
//     unless Config.ManualSettle).
//   - OnWritable, after Written drains output that made Send report
//     ErrOutputFull.
//   - OnLinkDetach, once per link, after the detach exchange (or when its
//     session or connection ends under it: then before OnSessionEnd, with
//     the session's or connection's error when the link had none of its
//     own — a refusal by ending the session, as RabbitMQ does, reaches
//     the link). A link the engine detaches on its own, for a fault of
//     the peer (a transfer beyond credit, …), is reported when its
//     detach is written, in the call that found the fault, with the
//     engine's error: a peer that breaks the protocol may never answer.
//     Its handle stays taken until the peer's detach (frames for it are
//     ignored meanwhile), which reports nothing more.
//   - OnSessionEnd, once per session, after its links' OnLinkDetach: at
//     the end exchange, or, for a session the engine ends on its own for
//     a fault of the peer, when its end is written (its links' events
//     first, with the session's error; the channel stays taken until the
//     peer's end).
//   - OnConnectionClose, once, last: after the close exchange, a failure
//     (a fault of the peer, the idle time-out: reported when the close
//     is written, the peer's answer not awaited) or CloseRead; the
//     OnLinkDetach and OnSessionEnd of what was still up come first.
//
// What this end ends by the application's call — Link.Detach, Session.End,
// Conn.Close — is reported at the peer's answer, which carries the peer's
// word (its error, whether it closed the link); a close the peer never
// answers ends after CloseWait, as a detach or end does with it.
//
// # Deliveries as the application's handles
//
// A delivery carries the application's value, as Proton's
// pn_delivery_set_context: [Link.SendWith] gives it to a delivery sent,
// [Link.SetDeliveryContext] (or [Delivery.SetContext] during
// OnDelivery) to any delivery the link holds unsettled, sent or
// received; it comes back as [DeliveryUpdate].Context in each
// OnDisposition of the delivery and as [Unsettled].Context, so no layer
// above keeps a map by delivery-id. The engine keeps it while it keeps
// the delivery and drops it when the delivery is settled and forgotten
// (or the link ends). A pointer costs no allocation; an integer or
// other value does (Go boxes it in the interface).
//
// The rules the layers above share are decided here once:
// [frame.StateType.Terminal] (an outcome ends a delivery), [ErrTryLater]
// (ErrNoCredit, ErrNoWindow, ErrBusy and ErrOutputFull match it: keep
// the send for OnFlow or OnWritable), [Link.ResumeAction] (what to do
// with a delivery kept through a detach) and [Creditor] (when a
// receiver grants credit again).
//
// # Transactions
//
// Part 4's local transactions, in both roles. A server sets
// [Config].Coordinator: the engine runs each peer's coordinator link
// itself (the Handler sees none of its events), calls
// [Coordinator].Declare and Discharge, and answers declare with
// declared, discharge with accepted or rejected
// (amqp:transaction:unknown-id, or the Coordinator's error such as
// amqp:transaction:rollback); the transactions of a coordinator link
// that goes are rolled back. The work of a transaction reaches the
// Handler marked: [Delivery.TxnID] on a transactional transfer,
// [DeliveryUpdate].TxnID on a transactional disposition (State is the
// outcome that applies at commit). A transfer in a transaction the
// coordinator did not declare detaches its link with
// amqp:transaction:unknown-id. A client attaches with
// [Session.AttachCoordinator], then [Link.Declare] (OnDisposition gives
// the TxnID), [Link.SendTxn], [Link.DisposeTxn] or [Delivery.AcceptTxn],
// and [Link.Discharge]. Transactional sends and receives allocate
// nothing once warm, as plain ones.
//
// # Link recovery
//
// A link detached without closing ([Link.DetachOnly], the peer's detach
// with closed false, a lost connection) keeps what it had not settled
// ([Link.Unsettled]: a sender's deliveries, a receiver's tags when a
// terminus is durable with unsettled-state); the application keeps that
// as long as it wants, for the connection or across connections (a
// broker's durable subscription), and gives it to a later attach of the
// same name: [LinkOptions].Resume, or a Handler that implements
// [Recoverer] for the attaches the engine answers. The attach carries it
// as its unsettled map (part 2 §2.6.13; cut to fit max-frame-size, with
// incomplete-unsettled). A sender then resolves each delivery against
// [Link.RemoteUnsettled]: settles it ([Link.SendResume] settled, no
// payload) when the receiver's state is terminal, sends it again
// resumed when the receiver has it otherwise, sends it anew when the
// receiver does not have it ([Link.ResumeAction] decides which, and
// says when a map cut short cannot tell); a receiver sees [Delivery.Resumed], and
// resumed deliveries it did not list are dropped. So each delivery
// unsettled at the break is settled once.
//
// # Lifetimes
//
// A Delivery's Payload and Tag, a DeliveryUpdate's State and Tag are views,
// valid only during the event: into the frame for a delivery in one
// transfer (no copy), else into the link's reassembly buffer ([frame.Join],
// reused for its next delivery). Output's bytes are valid, unchanged,
// until the next Written: every other method only adds after them.
// Link.RemoteAttach, RemoteSource and RemoteTarget are kept by the link,
// Conn.RemoteOpen by the connection.
//
// # Routes
//
// Feed splits what it is given into frames where they lie
// ([frame.Split]), and each frame takes one route: one switch on the
// descriptor of an AMQP frame, its channel's session found once, to the
// one function of its performative (the session's for transfer, flow,
// disposition, attach, detach and end, the connection's for begin and
// close; protocol headers, SASL and the open before). A transfer's
// head is read once ([frame.TransferHead]); a delivery in one transfer
// goes from there to OnDelivery within the transfer's own function (the
// session window, the link's credit, the delivery), and only a transfer
// the head does not take (a state, a resume, an abort) is parsed whole
// ([frame.ParseTransferWhole]).
//
// # Errors
//
// The handler of each performative returns the fault it finds, scoped to
// the connection, the session or the link, with the spec's condition;
// one function applies it as a close, end or detach. [Error] carries the
// condition as a [frame.Condition] (and the symbol of a condition outside
// the spec's list), so code decides by comparing conditions, never text;
// errors.Is(err, NewError(cond, "")) matches any error of that condition.
//
// # Faults
//
// A protocol violation by the peer ends the link, session or connection
// with the spec's condition and a description, never a panic: a frame
// larger than max-frame-size (amqp:connection:framing-error), a malformed
// performative (amqp:decode-error), a frame on a channel with no session
// (amqp:not-allowed), a channel above channel-max or handle above
// handle-max (amqp:connection:framing-error, as §2.7.1 and §2.7.2 ask),
// a handle never attached (amqp:session:unattached-handle, the session;
// frames for a handle whose detach exchange is over are ignored, as Qpid
// Proton and RabbitMQ ignore a flow that crossed the detach), a
// handle in use (amqp:session:handle-in-use), a transfer beyond the
// session's incoming window (amqp:session:window-violation), a transfer
// without link credit (amqp:link:transfer-limit-exceeded, the link), a
// message above the link's max-message-size
// (amqp:link:message-size-exceeded), a second attach of a link name in use
// in the same direction (part 2 §2.6.1: answered without a terminus and
// detached with amqp:not-allowed; with Config.LinkStealing the old link is
// detached with amqp:link:stolen instead), a peer that takes the
// connection past its memory budget (amqp:resource-limit-exceeded, the
// connection), a bad SASL exchange (outcome
// sys-perm, and the connection ends), a silent peer past the idle
// time-out (amqp:resource-limit-exceeded), a peer that has not opened
// within Config.HandshakeTimeout (the same). A close the peer does not
// answer within CloseWait ends the connection anyway. A frame this end
// cannot fit in the peer's max-frame-size is never written: an attach is
// refused by the call ([ErrFrameSize]), anything else closes the
// connection with amqp:frame-size-too-small (transfers are split to
// fit). Frames on a link or session
// this end is ending are ignored until the peer answers (they still count
// against the session window). A link, session or connection ended for a
// fault is reported to the Handler when its detach, end or close is
// written, not at the peer's answer.
//
// # Limits
//
// Memory is bounded by the configuration, not by the peer. A
// connection's budget, [Config].MaxMemory ([DefaultMaxMemory], 96 MiB),
// counts what the peer can make it keep — its open, sessions, links and
// their attach frames, unsettled incoming deliveries, deliveries being
// joined —
// and closes the connection with amqp:resource-limit-exceeded past it;
// beside the budget there is one frame of max-frame-size being read, and
// output ([Conn.Held] reports the budget in use). Within it: channel-max
// sessions, handle-max links per session, MaxMessageSize per message
// being joined, and output: Send
// reports [ErrOutputFull] past [Config].MaxOutput and [Conn.WantRead] turns false,
// so a driver stops reading from a peer that does not read (back-pressure
// reaches the application). Nothing is allocated per message once warm,
// on either path.
//
// # Security layers
//
// TLS and SASL (part 5) come before the AMQP layer. TLS is either direct
// (the driver's: a tls.Conn given to package driver's Driver, as its
// Dial and Server do with a TLS configuration) or by the TLS protocol
// header ([Config].TLSHeader): the engine exchanges the headers, then
// [Conn.UpgradeTLS] reports the handshake due and the driver runs it and
// calls [Conn.TLSEstablished]; package driver's Driver does that by
// itself (Driver.TLSConfig). SASL mechanisms are plug-ins in both roles: a
// server's [Authenticator] (usually [Mechanisms] of [ServerMechanism]s)
// offers and runs one [SASLExchange] per connection, challenge by
// challenge; a client's [Config].SASL lists [ClientMechanism]s in its
// order of preference and takes the first the server offers. Built in:
// ANONYMOUS, PLAIN, EXTERNAL (the TLS peer's certificate), SCRAM-SHA-256
// (RFC 5802/7677: the server stores [SCRAMCredentials], salted; the
// client checks the server's signature) and XOAUTH2 (the application's
// token checker). The handshake time-out bounds headers, TLS and SASL
// together: an exchange a peer never completes is cut off. WebSockets
// (the OASIS AMQP WebSocket binding) are a net.Conn from the module
// github.com/amqpsax/amqpsax/ws, under the same driver.
//
// # Spec references
//
// OASIS AMQP 1.0: part 2 §2.2 (headers), §2.4 (connections, idle time-out
// §2.4.5), §2.5 (sessions, windows §2.5.6), §2.6 (links, flow control
// §2.6.7, transfers §2.6.12, settlement §2.6.13), §2.7 (performatives),
// §2.8.15 (error conditions); part 3 §3.4 (outcomes), §3.5.5
// (durability); part 4 (transactions); part 5 §5.2–§5.3 (TLS, SASL).
package engine
