// Package broker is an embeddable in-memory AMQP 1.0 broker on package
// engine: for Go programs that want a broker inside, and for tests that
// want a real one without docker (package amqptest starts one per test).
//
//	b := broker.New(broker.Options{MaxBytes: 16 << 20})
//	go b.ListenAndServe("127.0.0.1:5672")
//	defer b.Close()
//
// # Nodes
//
// A producer (a link the peer sends on) names a node by its target's
// address, a consumer (a link the peer receives on) by its source's; the
// first link to name an address makes its node. A node is a queue, whose
// consumers compete for its messages, or fan-out, where every consumer
// gets a copy (it has a queue of its own, its subscription, for as long
// as it is attached; a message sent while none is attached is dropped).
// Options.FanoutPrefixes names fan-out addresses; a consumer's source
// with distribution-mode "copy" or capability "topic" (a producer's
// target with capability "topic") makes a new node fan-out too. A
// consumer with distribution-mode "copy" on a queue that is there
// browses it, as ActiveMQ Artemis's browsers do: it is sent every
// message, oldest first, new ones as they come, and takes none (its
// outcomes change nothing, the delivery-count is not raised).
//
// A source with capability "shared" on a fan-out node is a receiver of
// a shared subscription, as Qpid JMS (createSharedConsumer,
// createSharedDurableConsumer) and ActiveMQ Artemis name them: the
// subscription is the link's name up to its first "|" ("sub", "sub|2",
// "sub|volatile1", "sub|global2"), the container's (the connection's
// container-id), or any container's with capability "global" too; its
// receivers take turns at one queue of its own. A subscription has one
// set of filters, those of the receiver that made it, as a JMS shared
// subscription has one selector: a receiver that gives other filters
// (or none to one that has some) while the subscription has receivers
// is refused with amqp:precondition-failed; given to a durable
// subscription kept with no receiver, they replace it (its kept
// messages are dropped), as JMS's createSharedDurableConsumer with
// another selector does. A subscription whose link name says volatile,
// or whose source is not durable, goes with its last receiver; a
// durable one stays, copying messages, until its last receiver closes
// its link.
//
// A producer with no target, or a target without an address, is the
// anonymous relay (the broker's open offers ANONYMOUS-RELAY): each
// message goes to the node its properties' to names, made when there is
// none, as a link to that address would. A message without a to is
// rejected with amqp:not-found (as RabbitMQ 4 rejects one it cannot
// route), one to an address the producer may not write or make with
// amqp:unauthorized-access, one past a bound with
// amqp:resource-limit-exceeded; the link goes on. Options.Permissions is
// asked about each address the first time the link sends to it (it
// remembers up to 256 addresses).
//
// # Filters
//
// A consumer's source filter-set (part 3 §3.5.8) is read at its attach:
// the broker applies a JMS selector (apache.org:selector-filter:string,
// as Qpid JMS, Qpid Proton's Selector, Azure/go-amqp's
// NewSelectorFilter send it), no-local (apache.org:no-local-filter:list:
// no message sent on the consumer's own connection), and the properties
// and application-properties filters RabbitMQ 4.1 takes
// (amqp:properties-filter, amqp:application-properties-filter: each
// field must equal the message's; a string "&p:x" matches a prefix,
// "&s:x" a suffix). The answer's source carries the filters applied and
// no other: a filter the broker does not know is left out, and refuses
// the link with amqp:not-implemented only when the consumer lists it in
// its desired capabilities. A filter that does not parse refuses the
// link with amqp:invalid-field, its description saying where (a
// selector's column).
//
// A message a consumer's filters do not take stays on its queue for the
// others (as ActiveMQ Artemis's selectors on a queue), and a selective
// consumer never holds others back; on a fan-out node, its subscription
// gets no copy of it. QueueStats.Filtered counts them. Cost: a selective
// consumer of a queue looks at each message once while the queue keeps
// its order (it resumes after the last one it looked at, found by a
// binary search: O(log n) a dispatch, not O(n)); a message put back at
// the queue's front (released, modified, left by a consumer that went,
// or not sent because the output was full) makes each selective
// consumer look at the queue once more from its front. A browser finds
// its place by a binary search too while the queue is in order; while a
// message put back before an older one is in it, it scans the queue for
// each message it is sent. Filters are matched on the encoded sections, without
// decoding the body or allocating.
//
// A dynamic source or target (dynamic = true, no address: part 3 §3.5.3)
// makes a temporary queue with an address of its own,
// "amqpsax.dynamic." and 128 random bits, returned in the attach's
// answer: the reply queue of a request/reply client. Only the connection
// that made it may consume from it (others are refused with
// amqp:unauthorized-access; they may send to it). It is removed when
// that link detaches; other links attached to it are then detached with
// amqp:resource-deleted.
// With Options.AutoDelete, other queues are removed once they have no
// consumers, producers or messages left.
//
// With Options.RouteKey set, a message whose application-properties hold
// a string under that key goes to the node it names instead of its
// link's ([Route] reads it, without decoding the body or allocating).
//
// # Nodes served by Go code
//
// Options.Responders maps addresses to [Responder] functions: nodes
// that answer requests, as a service's do (Azure's $cbs and
// $management, RabbitMQ 4's /management, AMQP management). A producer
// whose target is such an address sends requests; each is decoded and
// handed to its Responder on a goroutine of its own, never the
// connection's (a link has at most MaxRequestsInFlight requests being
// answered: that is its credit, topped up as they are; a connection at
// most MaxConnRequestsInFlight, past which a request is rejected with
// amqp:resource-limit-exceeded), with a ctx that
// ends with the link, its connection or the broker. The reply is stored
// on the node the request's reply-to names, with its correlation-id set
// to the request's correlation-id, or its message-id when it has none
// (the AMQP request/response convention); reply-to "$me", or none, is
// the receiver paired with the request's link: one attached from the
// responder's address with the same link name on the same connection
// (RabbitMQ 4's direct reply; its /management marks both links
// {paired: true}). A receiver attached from a responder's address takes
// the replies sent to its target's address (the reply address Azure's
// clients choose), a queue made for it and removed
// with it as a dynamic node is; with no target address, "$me" or a
// responder's address (RabbitMQ 4's clients name /management), a queue
// of its own. A reply to a node that is not there is dropped,
// and logged.
//
// A request sent unsettled is accepted once its Responder has returned
// a reply (or none); a Responder's error rejects it with
// amqp:internal-error and the error's text, and no reply is sent (a
// Responder that panics is such an error). A service's status is the
// Responder's to put in the reply it returns (AMQP management's
// "statusCode", $cbs's "status-code", RabbitMQ's subject "201"). With
// Options.Permissions, sending requests needs Write on the responder's
// address, taking replies Read on it, and a reply to a reply-to the
// requester may not write to is dropped.
//
// # From Go code
//
// A program (or a test: package amqptest wraps these) touches the
// broker directly: [Broker.Publish] stores a message as a producer
// would, [Broker.Declare] makes a queue, [Broker.Peek] reads a queue's
// waiting messages without taking them, [Broker.Wait] blocks until a
// queue's statistics meet a condition (woken by the broker's changes,
// never a timer), [Broker.Peers] lists the connections and
// [Broker.Drop] cuts one as a network failure would, and
// [Broker.OnAttach] sets a hook that may refuse or hold back an attach.
//
// # Flow control
//
// Every queue is bounded in messages and bytes (Options.MaxMessages,
// MaxBytes), counting the messages waiting and those sent and not yet
// settled. Producers get credit for what their node has room for, at
// most Options.Credit at a time, topped up as they use it: a node at
// its bound grants none, and its producers wait until it has drained to
// 7/8 of its bounds, as RabbitMQ's credit flow makes them wait. A fan-out
// node waits for its fullest subscription. A queue can go past its
// bound by the credit granted before it filled, which shrinks as it
// fills. With Options.RejectWhenFull, producers always have credit and
// a message to a full queue is rejected with
// amqp:resource-limit-exceeded instead.
//
// Options.MaxMemory bounds the bytes of messages the broker holds, all
// queues together (1 GiB by default): each producer's credit is also at
// most its share of the room left (divided among the producers
// attached), at least one while there is room, and producers wait at
// the bound until it is below 7/8. A producer that outruns its credit's
// estimate (small messages, then large ones) gets a message that would
// take the broker past the bound by an eighth rejected with
// amqp:resource-limit-exceeded: the broker's messages stay within
// MaxMemory and its eighth whatever the clients send.
//
// # Delivery
//
// A consumer is sent messages highest priority first, oldest first
// within a priority (Lifetimes), as its credit allows (those
// above its max-message-size stay for others), settled or not as its
// sender settle mode says; receiver settle mode second is honoured (the
// broker settles after the consumer's outcome). Outcomes (part 3 §3.4):
// accepted and rejected settle a message (a rejected one is dropped, or
// dead-lettered: Lifetimes);
// released puts it back at the front of its queue as it was; modified
// puts it back with its header's delivery-count one up when
// delivery-failed is set, and with undeliverable-here for other
// consumers only. The unsettled messages of a consumer that goes (its
// link detaches, its connection closes or is lost) go back to the front
// of the queue in the order they were sent, with delivery-count one up
// (a durable subscription's stay acquired by it: Link recovery).
// A producer's unsettled message is accepted once stored: in memory
// only, so it survives consumers, not the process.
//
// A message is copied once, out of the frame into a buffer the broker
// recycles (nothing is allocated per message once warm), and sent to a
// consumer on another connection by that connection's Driver: the broker
// kicks it (a driver.Waker, at most one run queued per connection, never
// run on the kicking connection's goroutine), and no lock is held while
// it does. A connection's events run one at a time, on whichever of its
// Driver's goroutines holds it (the reader after a read, the loop for
// timers and kicks): the broker relies on the one at a time, never on
// the goroutine.
//
// # Lifetimes
//
// A message's header priority (part 3 §3.2.1: 0 to 9, 4 when absent,
// above 9 taken as 9) orders its queue: the highest first, in the order
// they came within one (a message put back goes to the front of its
// own). A queue is a ring a priority: storing and taking are O(1),
// finding a consumer's next message past those it may not take
// O(levels), and nothing is allocated per message once warm.
//
// A message expires at its header's ttl (ms) after the broker received
// it, or at its properties' absolute-expiry-time, the earlier (a ttl or
// time of 0 is none, as ActiveMQ Artemis reads them). An expired
// message is never delivered: it is dropped, or moved to
// Options.ExpiryAddress (as Artemis' expiry address), and counted in
// QueueStats.Expired. Expiry costs no scan of a queue: a message is
// checked when it comes (one already expired is never stored), when it
// is at the front of its queue as a consumer takes from it, and when it
// is at the front as a message is stored (two a message at most) or as
// statistics are read (Queue, Queues). A message that expired behind
// others still counts in Depth until it comes to the front.
//
// Options.DeadLetterAddress names the node (a queue, made when needed)
// that takes the messages consumers reject, and, with
// Options.MaxDeliveryCount, those whose header's delivery-count reaches
// it on a failed delivery (a modified outcome with delivery-failed, or
// a consumer gone with it unsettled), as Artemis' dead-letter address
// and Azure Service Bus's dead-letter queue. A dead-lettered message is
// a copy of the original with message annotations saying why:
// x-opt-deadletter-reason (the rejected outcome's error condition,
// "rejected" without one, MaxDeliveryCountExceeded, or
// TTLExpiredException for the expiry address), x-opt-deadletter-description
// (the rejected outcome's error description) and x-opt-original-address;
// its priority and delivery-count are kept, and it does not expire.
// It is counted in its node's QueueStats.DeadLettered.
// Options.DeadLetterAddresses gives single queues an address of their
// own (or none). Without an address, rejected messages and those past
// MaxDeliveryCount are dropped. A message rejected on the dead-letter node itself, or that
// does not fit there (its bounds, MaxMemory, MaxQueues), is dropped.
//
// A message whose message annotations hold x-opt-delivery-time (an
// absolute time: a timestamp, or ms since the epoch), x-opt-delivery-delay
// (ms from when the broker received it; both as Artemis) or
// x-opt-scheduled-enqueue-time (Service Bus's, a timestamp) in the
// future is held out of its queue until then (the latest of them):
// counted in QueueStats.Scheduled and in its node's bounds and
// MaxMemory as any message, not in Depth. The broker keeps them in one
// heap, earliest first, and one timer for the earliest, whose run makes
// them visible and wakes their consumers; storing a message, a
// consumer's send and reading statistics do it too. A fan-out node
// copies a scheduled message to the subscriptions attached when its
// time comes. Options.Now sets the broker's clock for all of this (a
// fake one in tests).
//
// A modified outcome's message-annotations (part 3 §3.4.5, as RabbitMQ 4
// and Service Bus clients send them) are merged into the message's
// message annotations before it is delivered again: an entry replaces
// the one of its key, or is added. The message is rewritten with
// package message's splice (message.Append): the bare message and
// footer are copied byte for byte.
//
// # Transactions
//
// The broker is a transaction coordinator (AMQP 1.0 part 4, local
// transactions), the engine's Coordinator of every connection unless
// Options.Engine.Coordinator sets another. A message sent in a
// transaction is accepted and held until the transaction commits, then
// stored on its node (checked as any message when it comes: a route to a
// node the broker may not make, or a full node with RejectWhenFull, is
// rejected; the messages held count in their node's bounds and in half
// their connection's memory budget, past which they are rejected with
// amqp:resource-limit-exceeded); an outcome a consumer gives in a
// transaction is held, its message still acquired, and applied at the
// commit. A
// rollback drops the held messages and puts the acquired ones back at
// the front of their queue, to be delivered again. A transaction left
// open when its controller's link or connection goes is rolled back.
// Transactional acquisition (a txn-id in a consumer's flow) is not
// supported.
//
// # Link recovery
//
// A link whose terminus at the peer is durable (part 3 §3.5.5: a
// producer's target with unsettled-state, a consumer's source with
// configuration or unsettled-state) keeps its
// state through a detach without closing (closed = false) and through a
// lost connection, keyed by the peer's container-id, the link's name and
// the broker's role, for a later attach of the same name from the same
// container, on any connection (part 2 §2.6.13). The terminus's expiry
// policy ends it (part 3 §3.5.6): timeout seconds after the link
// detaches (link-detach), its session ends (session-end, the default),
// or its connection closes or is lost (connection-close); never, with
// policy never. A link the peer closes (closed = true) ends it at once.
// The broker keeps at most Options.MaxDurableLinks detached (10,000 by
// default): past it, the one detached longest ends at once.
//
// A durable producer that asks for receiver settle mode second gets it:
// the broker accepts a message once it is stored and forgets it when the
// producer settles. Detached, the broker keeps the tags of those it had
// stored and the producer had not settled, with its outcome; the answer
// to the next attach of the name carries them (its unsettled map, those
// the producer's attach still lists), so the producer settles those
// (engine.Link.SendResume) and sends again only what the broker never
// got whole: each message is stored once. A resumed delivery of a
// message the broker has is given its outcome again, not stored. In
// receiver settle mode first the broker settles each message as it
// stores it and keeps nothing: a message whose outcome the break lost is
// sent again as new, and stored twice. A detached producer's state is
// bounded by what it had not settled, which the connection's engine
// budget (engine.Config) bounds while it is attached.
//
// A consumer whose source is durable (configuration or unsettled-state)
// is a durable subscription. Detached without closing (or its
// connection lost), the broker keeps it: a fan-out node goes on copying
// messages to it, bounded as any subscription by MaxMessages and
// MaxBytes, and the copies kept for all detached subscriptions together
// by them too, as for one queue (a copy past them is dropped for it and
// counted in Dropped: producers are not held back for a consumer that
// may not come back, and a peer that leaves many subscriptions detached
// cannot make the broker keep their number times a queue's bound);
// with unsettled-state, the messages it had been sent and had not
// settled stay acquired by it, not released to others (with
// configuration alone they go back to the front of its queue). Its
// delivery-tags are the broker's numbers of its messages, the same
// across attaches. An attach of the name again resumes it: the answer's
// unsettled map lists what it holds acquired; each of those the
// consumer's attach lists with an outcome is settled with a resumed
// transfer and the outcome applied, each listed without one is sent
// again with resume set, each not listed (a consumer that keeps no
// state, as Qpid Proton's) goes back to the front of its queue and is
// sent as a new delivery; then the messages kept for it follow. When
// its expiry policy ends it, its acquired messages go back to their
// queue with delivery-count one up, as those of any consumer that
// goes, and its subscription's copies are dropped. QueueStats.Detached
// counts the durable consumers detached; their acquired messages are in
// Unsettled, the copies kept for them in Depth. An attach of the name to
// another address ends the old subscription and starts a new one.
//
// An attach of a durable name that is still attached on another
// connection of the same container (one the broker has not seen fail
// yet) takes it over: the broker closes that connection, as lost, and
// answers the attach once the old link has let go of its state (at most
// 5 s; past that with a new state). The answer is held
// (engine.Link.AnswerLater), not waited for: the connection of the
// attach goes on with its other links meanwhile.
//
// # Security
//
// Options.Users are the accounts of SASL PLAIN (Options.Anonymous allows
// ANONYMOUS beside it); with none, clients need not authenticate, unless
// Options.Engine.Auth sets another Authenticator (SCRAM-SHA-256, say).
// Options.TLSConfig serves TLS (amqps), with SASL EXTERNAL for a verified
// client certificate.
//
// Options.Permissions decides what each account (the identity SASL
// authenticated) may do to each node: Configure (make it), Write (send
// to it), Read (consume from it), as RabbitMQ's permissions do. It is
// asked when a link attaches, never per message; a link it refuses is
// answered without a terminus and detached with
// amqp:unauthorized-access. A message routed by RouteKey to another
// node is checked (Write, and Configure for a new one) the first time
// its producer routes to that address. [NewPermissions] makes one from
// a regular expression per account and Op.
//
// Addresses, link names and container-ids must be UTF-8 (AMQP strings),
// and an address at most MaxAddressLength bytes: others are refused
// with amqp:invalid-field. One connection may make at most
// Options.MaxQueuesPerConnection nodes, one account
// Options.MaxQueuesPerAccount, and keep Options.MaxDurableLinksPerAccount
// durable links; past them a link is refused with
// amqp:resource-limit-exceeded. Options.MaxConnections bounds the
// connections served at once. A connection begins at most
// DefaultMaxSessions sessions (Engine.ChannelMax) of at most 256 links
// (Engine.HandleMax), and the broker's state of each link counts in its
// engine memory budget (engine.Config.MaxMemory).
//
// # Statistics
//
// Queue and Queues return each node's [QueueStats]: depth, scheduled, bytes,
// unsettled, consumers (and durable ones detached), producers and those
// waiting for credit, totals of each outcome, of messages filters
// passed over, and rates. A fan-out node's include its shared
// subscriptions'.
//
// # Limits
//
// The messages the broker holds are bounded by Options.MaxMemory and its
// eighth (and each queue by its bounds, which it may pass by the credit
// granted before it filled); its nodes by Options.MaxQueues, of
// MaxAddressLength bytes of name each at most; each connection by its
// engine budget (engine.Config.MaxMemory: its links, the broker's state
// of them, and half of it for the messages its open transactions hold),
// plus its engine buffers (one frame being read, MaxOutput being
// written). Messages are kept in memory only: nothing survives the
// process, durable links' state included.
package broker
