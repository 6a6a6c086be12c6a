// Package client is a blocking, context-aware AMQP 1.0 client on package
// engine, with the calls of Azure/go-amqp: a program ports by changing
// the import and the way messages are built (message.Message).
//
//	c, err := client.Dial(ctx, "amqp://user:pass@host:5672", nil)
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
// A connection runs on one goroutine (engine.Driver, with its reader),
// which owns the engine. Every call hands its work to it and waits on a
// completion of its own with its ctx, as net/http's persistConn and
// x/net/http2's ClientConn do; no goroutine is started per session, link
// or message. Every method of Conn, Session, Sender, Receiver and
// Delivery is safe from any goroutine. When the connection ends (closed,
// lost, or closed by the peer) every blocked call wakes with its error.
//
// # Opening
//
// Dial and NewConn return once the open exchange is complete: TCP, TLS
// (amqps), the protocol header, SASL, the peer's open. ctx bounds all of
// it: a silent server makes Dial fail when ctx ends. A failure is a
// *DialError naming the stage ("tcp", "tls", "header", "sasl", "open").
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
// Wait gives the outcome: thousands may be in flight on one link.
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
// names. Meanwhile calls wait within their ctx. Nothing is dropped
// silently: an unsettled message whose outcome had not come completes
// with the loss's *Error; messages not yet sent go on the new link;
// deliveries received but not settled can no longer be settled (the
// broker delivers them again); a transaction open at the loss ends with
// its error. When ReconnectOptions.MaxAttempts run out the connection
// ends with the loss's error.
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
// Transaction.Accept, allocate nothing once warm.
package client
