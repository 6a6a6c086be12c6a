// Package client is a blocking, context-aware AMQP 1.0 client on package
// engine, with the calls of Azure/go-amqp: a program ports by changing
// the import and the way messages are built (message.Message).
//
//	c, err := client.Dial(ctx, "amqps://user:pass@host", nil)
//	s, err := c.NewSession(ctx, nil)
//	snd, err := s.NewSender(ctx, "orders", nil)
//	err = snd.Send(ctx, &msg, nil)      // waits for the outcome
//	rcv, err := s.NewReceiver(ctx, "orders", &client.ReceiverOptions{Credit: 500})
//	d, err := rcv.Receive(ctx, nil)     // the next delivery, safe to keep
//	err = d.Accept(ctx)
//	err = c.Close()
//
// # One goroutine per connection
//
// A connection runs on one goroutine (driver.Driver, with its reader and
// writer), and its engine one event at a time, under the Driver's lock.
// Every call hands its work to the engine and waits on a completion of
// its own with its ctx, as net/http's persistConn and x/net/http2's
// ClientConn do; when the connection is free the call runs that work and
// writes it itself (driver.Driver.DoNow), so a blocking Send on an idle
// connection is written by its caller, and over TCP its outcome is read
// by its caller too (driver.Driver.ReadUntil; else the reader goroutine
// that read it hands it over), as is the delivery a waiting Receive
// gets. No goroutine is started per
// session, link or message. Every method of Conn, Session, Sender, Receiver and
// Delivery is safe from any goroutine. When the connection ends (closed,
// lost, or closed by the peer) every blocked call wakes with its error.
//
// # Opening
//
// Dial and NewConn return once the open exchange is complete: TCP, TLS
// (amqps), the protocol header, SASL, the peer's open. ctx bounds all of
// it: a silent server makes Dial fail when ctx ends. A failure is a
// *DialError naming the stage ("tcp", "tls", "header", "sasl", "open"),
// with the URL's password redacted ("amqp://user:xxxxx@host", as
// net/url's URL.Redacted gives it) in its text and in every error it
// wraps: a credential is never in an error. SASL PLAIN sends the
// password as it is: over amqp:// (no TLS) Dial refuses it before
// sending anything (ErrInsecurePlain) unless
// ConnOptions.AllowInsecurePlain says a network without TLS is trusted.
// NewSession, NewSender and NewReceiver return after the peer's answer; a
// peer that refuses a link or session (an answer without a terminus and a
// detach, a detach or end right after the answer, or the session or
// connection ended under it) makes them return an *Error with its
// condition and description. An answer whose terminus names no address
// (Qpid Proton's python binding refuses so, its detach in a later write)
// is given a second for the detach before the link counts as attached.
//
// # Sending
//
// Send encodes the message, waits for credit and, unsettled, for the
// peer's outcome: accepted is nil; rejected, released and modified are
// *OutcomeError (errors.Is: ErrRejected, ErrReleased, ErrModified), never
// nil. Send documents what happens when ctx ends before, during and after
// the transfer. SendAsync queues a message and returns a Pending whose
// Wait gives the outcome: thousands may be in flight on one link. A
// sender holds at most 1,024 messages unsent (waiting for credit): past
// that SendAsync waits, within its ctx, for the link to take one, so a
// burst of 100,000 costs no more memory than that and runs as fast as a
// window of 1,000. A message that finds nothing of the sender's on its
// way is written at once on the caller's goroutine, as Send's always is;
// one behind messages awaiting their outcome goes to the connection's
// goroutine, and one behind messages held for want of credit only
// queues (the peer's next grant sends it with them): so a burst of
// SendAsync goes out in a few large writes, not a write each.
//
// # Receiving
//
// A receiver keeps ReceiverOptions.Credit deliveries granted (prefetch),
// topped up as Receive takes them, or grants only what IssueCredit gives
// (Credit -1, with DrainCredit). Receive returns a *Delivery that is the
// caller's to keep; ReceiveInto reuses the caller's Delivery and its
// message.Message and allocates nothing once warm. Accept, Reject,
// Release and Modify settle a delivery (receiver settle mode first: the
// disposition is final as sent, with no round trip).
//
// ReceiverOptions.SettlementMode second makes them wait for the
// sender's settlement instead (exactly once where the peer keeps its
// promise). Reject sends Error.Info, Modify ModifyOptions.Annotations
// (Service Bus's dead-letter reason, abandon with properties).
//
// # Links: names, properties, filters
//
// SenderOptions and ReceiverOptions carry go-amqp's names for what real
// services read: Properties and DesiredCapabilities of the attach,
// Filters of a receiver's source (NewSelectorFilter, NewLinkFilter; the
// peer's grant is LinkSourceFilterValue), TargetAddress and SourceAddress,
// dynamic nodes (DynamicAddress: Address returns the node the peer
// made), terminus capabilities and expiry. ConnOptions carries the open's
// Properties, capabilities and MaxSessions; Conn.Properties,
// Sender.Properties and Receiver.Properties return the peer's.
//
// # Request and response
//
// Session.NewRequester pairs a sender to a node with a receiver for its
// replies; Requester.Request sends a request with a fresh message-id and
// reply-to and returns the reply whose correlation-id is that id, many
// in flight at once, with no goroutine of its own (the waiting Requests
// take turns reading replies). RequesterOptions covers Azure's $cbs and
// $management (the reply address as the receiver's target), RabbitMQ
// 4's /management (paired links, settled requests, reply-to "$me") and
// a dynamic reply node.
//
// # Transactions
//
// Session.NewTransaction declares a transaction with the peer's
// coordinator (part 4; the session's coordinator link is attached at
// its first use and kept). Sends in it (SendOptions.Transaction) become
// visible when it commits; outcomes given in it (Transaction.Accept,
// Reject, Release, Modify of a received Delivery) apply when it commits
// and are undone when it rolls back (a broker delivers the messages
// again). Commit and Rollback wait for the coordinator's answer: the
// work admitted before them is written first (a Commit waits for sends
// still waiting for credit, a Rollback withdraws them). A transaction is
// its connection's: links of any of its sessions may work in it.
//
//	tx, err := s.NewTransaction(ctx)
//	err = snd.Send(ctx, &msg, &client.SendOptions{Transaction: tx})
//	err = tx.Accept(ctx, d)
//	err = tx.Commit(ctx)                // or tx.Rollback(ctx)
//
// Once a transaction has ended, work in it returns ErrTransactionDone and
// writes nothing. A peer without transactions refuses the coordinator
// link: NewTransaction returns its *Error (RabbitMQ 3 ends the session
// with amqp:not-implemented). A declare or
// discharge the coordinator refuses is an *Error of ScopeTransaction
// (amqp:transaction:rollback: the work was rolled back); a coordinator
// link or connection that ends under a transaction ends it with its
// error, and the coordinator rolls it back. A transaction does not
// survive a reconnect: it ends with the loss's error, and a
// NewTransaction after it declares one on the new connection.
//
// # Reconnect
//
// With ConnOptions.Reconnect, Dial's connection is dialled again when it
// is lost (cut, failed, or closed by the peer), with back-off; its
// sessions are begun again and its links attached again, with their
// names and the connection's container-id. Meanwhile calls wait within
// their ctx. When ReconnectOptions.MaxAttempts run out the connection
// ends with the loss's error. What survives a reconnect:
//
//   - Messages queued and not yet sent go on the new link, in order.
//   - Messages sent unsettled whose outcome had not come: on a plain
//     sender each completes with the loss's *Error (its fate is
//     unknown: send it again if it must arrive); on a resumable sender
//     (SenderOptions.Durable) each is resumed and completes with its
//     real outcome (see Resuming).
//   - Deliveries received and not settled: on a plain receiver they can
//     no longer be settled (Accept returns the loss's error; the broker
//     delivers them again), and those not yet received are dropped; on
//     a resumable receiver (ReceiverOptions.Durable) they can, once the
//     sender resumes them (see Resuming).
//   - Transactions do not survive: a Transaction open at the loss ends
//     with the loss's error (the coordinator rolls it back), and work in
//     it returns that error.
//
// Nothing is dropped silently: every Send and Pending.Wait returns once,
// with an outcome or an error.
//
// # Resuming
//
// A resumable sender (SenderOptions.Durable) uses link recovery (part 2
// §2.6.13): its target is durable (terminus-durable unsettled-state,
// expiry-policy never, or link-detach with ExpiryTimeout), it asks for
// receiver settle mode second, and it tags each delivery itself. When the
// connection is lost it keeps what it sent and has not settled (the
// encoded messages it holds for their Pendings already, nothing more)
// and attaches again with their tags as its unsettled map; the peer's
// map then says what became of each:
//
//   - the peer gave it an outcome (its disposition lost): a resumed
//     settled transfer settles it, and its Pending returns that outcome;
//   - the peer has it without an outcome: it is sent again with resume
//     set, and its outcome comes as any other's;
//   - the peer does not know it: it is sent as a new delivery;
//   - the peer's map was incomplete and does not list it, or this end's
//     was cut at the peer's max-frame-size: its fate cannot be told, and
//     its Pending returns the loss's error, as without Durable.
//
// So each message is delivered and settled once, when the peer is a
// durable receiver: one that keeps a link's unsettled state across
// connections by its name and container-id, settles a resumed delivery
// once, and stores a resumed message it has once (package broker; an
// engine.Handler that is an engine.Recoverer). A peer that ignores the
// durable target, or answers with receiver settle mode first, gives at
// least once: what it has forgotten is sent again as new. The sender
// keeps at most as many deliveries unsettled as an attach's unsettled
// map holds within the peer's max-frame-size (about 3,400 for 64 KiB),
// and resumes within one Conn's life: a new Conn, even with the same
// ContainerID and link Name, starts afresh.
//
// A resumable receiver (ReceiverOptions.Durable) is the other half: its
// source is durable, and at a loss it keeps the tags of the deliveries
// it handed out and had not settled, and of those queued unreceived
// (dropped, as on a plain receiver), and attaches again with them as its
// unsettled map. When the sender (a broker's durable subscription)
// resumes one handed out before, the old Delivery's Accept, Reject,
// Release or Modify settles it on the resumed delivery; one given while
// the connection was down is sent then. One dropped unreceived comes
// again from Receive with Delivery.Resumed set. A tag the sender's map
// does not hold is one it has settled its own way: settling that
// Delivery returns the loss's error, as on a plain receiver. A
// disposition already handed to the lost connection counts as given
// (receiver settle mode first): if it never arrived, the sender delivers
// the message again as new.
//
// # Errors
//
// The end of a link, session or connection is an *Error (Condition,
// Description, Remote, Scope); a clean end by either side is ErrClosed.
// Send's outcomes are *OutcomeError; an ended ctx gives ctx's error (or
// its cause), wrapped with ErrOutcomeUnknown when a Send's message had
// gone out.
//
// # Allocation
//
// Once warm, Send of a message allocates nothing (its encoding buffer and
// completion are reused per sender); SendAsync nothing either (its Pending
// is a value). Receive allocates well under once per delivery (0.07 for
// a message of one data section), ReceiveInto never. The same holds in a
// transaction: a transactional Send, and ReceiveInto with
// Transaction.Accept, allocate nothing once warm; and on resumable links:
// a Durable sender's Send and SendAsync, a Durable receiver's ReceiveInto
// and Accept (a loss and its resume allocate, once each).
package client
