//go:build proton

package bench

// Qpid Proton-C's pn_connection_driver as the sending client of a
// recorded server stream (see send.go), for the sender benchmark. As in
// driver_proton.go the whole loop runs in C: one cgo call sends n
// messages.
//
// The sender is a client transport offering SASL ANONYMOUS that opens
// its connection, a session and a sender link (snd-settle-mode settled
// or unsettled, as the stream's) at once, as a Proton application does
// before its first write. It sends SendBatch messages at a time (pn_delivery with
// the delivery's 4-byte big-endian number as its tag, pn_link_send,
// pn_link_advance, and pn_delivery_settle at once when pre-settled), then
// takes the driver's write buffer and drops it; for unsettled sends it is
// then fed the server's disposition of the batch, and settles each
// delivery whose accepted outcome it reports (PN_DELIVERY, updated). It
// closes what the peer closes. Input goes through the driver's own read
// buffer (pn_connection_driver_read_buffer_sized, 64 KiB), every event
// is taken (pn_connection_driver_next_event), and output is taken from its
// write buffer until it is empty.

/*
#cgo pkg-config: libqpid-proton
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <proton/connection_driver.h>
#include <proton/connection.h>
#include <proton/session.h>
#include <proton/link.h>
#include <proton/delivery.h>
#include <proton/disposition.h>
#include <proton/event.h>
#include <proton/transport.h>
#include <proton/terminus.h>
#include <proton/condition.h>
#include <proton/sasl.h>

typedef struct {
	int64_t sent, accepted, conns, out;
	int failed;
	char cond[256];
} snd_result_t;

typedef struct {
	const char *msg;
	size_t msglen;
	int settled;
	int64_t batch, msgs;
	const char *data;            // the server's stream
	size_t open, attach, tail, len;
	const int64_t *disps;        // unsettled: the offsets of the batches' dispositions
	char shortdisp[64];          // the disposition of a short last batch
	size_t shortlen;
	int capture;                 // keep the output in cap
	char *cap;
	size_t caplen, capcap;
	snd_result_t *r;
} snd_ctx_t;

static void snd_fail(snd_ctx_t *c, pn_condition_t *cond, const char *what) {
	if (c->r->failed) return;
	c->r->failed = 1;
	if (cond && pn_condition_is_set(cond)) {
		const char *name = pn_condition_get_name(cond), *desc = pn_condition_get_description(cond);
		snprintf(c->r->cond, sizeof c->r->cond, "%s: %s: %s", what, name ? name : "?", desc ? desc : "");
	} else {
		snprintf(c->r->cond, sizeof c->r->cond, "%s", what);
	}
}

static void snd_events(snd_ctx_t *c, pn_connection_driver_t *d) {
	pn_event_t *e;
	while ((e = pn_connection_driver_next_event(d))) {
		switch (pn_event_type(e)) {
		case PN_DELIVERY: {
			pn_delivery_t *dl = pn_event_delivery(e);
			if (pn_link_is_sender(pn_delivery_link(dl)) && pn_delivery_updated(dl) &&
				pn_delivery_remote_state(dl) == PN_ACCEPTED) {
				c->r->accepted++;
				pn_delivery_settle(dl);
			}
			break;
		}
		case PN_LINK_REMOTE_CLOSE:
			pn_link_close(pn_event_link(e));
			break;
		case PN_SESSION_REMOTE_CLOSE:
			pn_session_close(pn_event_session(e));
			break;
		case PN_CONNECTION_REMOTE_CLOSE:
			pn_connection_close(pn_event_connection(e));
			break;
		case PN_TRANSPORT_ERROR:
			snd_fail(c, pn_transport_condition(pn_event_transport(e)), "transport error");
			break;
		default:
			break;
		}
	}
}

// snd_write takes the events and the output until there is none.
static void snd_write(snd_ctx_t *c, pn_connection_driver_t *d) {
	for (;;) {
		snd_events(c, d);
		pn_bytes_t wb = pn_connection_driver_write_buffer(d);
		if (!wb.size) break;
		c->r->out += wb.size;
		if (c->capture) {
			if (c->caplen + wb.size > c->capcap) {
				size_t cap = 2 * (c->caplen + wb.size);
				char *p = realloc(c->cap, cap);
				if (!p) { snd_fail(c, NULL, "out of memory"); return; }
				c->cap = p;
				c->capcap = cap;
			}
			memcpy(c->cap + c->caplen, wb.start, wb.size);
			c->caplen += wb.size;
		}
		pn_connection_driver_write_done(d, wb.size);
	}
}

// snd_feed feeds p[0:len] through the driver's read buffer, then writes.
static int snd_feed(snd_ctx_t *c, pn_connection_driver_t *d, const char *p, size_t len) {
	size_t off = 0;
	while (off < len && !c->r->failed) {
		pn_rwbytes_t rb = pn_connection_driver_read_buffer_sized(d, 64 << 10);
		if (rb.size == 0) {
			snd_fail(c, pn_transport_condition(d->transport), "read side closed");
			break;
		}
		size_t n = len - off < rb.size ? len - off : rb.size;
		memcpy(rb.start, p + off, n);
		off += n;
		pn_connection_driver_read_done(d, n);
		snd_events(c, d);
	}
	snd_write(c, d);
	return !c->r->failed;
}

// snd_conn runs one client connection that sends n messages, n <= msgs.
static void snd_conn(snd_ctx_t *c, int64_t n) {
	pn_connection_driver_t d;
	if (pn_connection_driver_init(&d, NULL, NULL)) { snd_fail(c, NULL, "pn_connection_driver_init"); return; }
	pn_sasl_allowed_mechs(pn_sasl(d.transport), "ANONYMOUS");
	pn_connection_set_container(d.connection, "bench-sender");
	pn_connection_open(d.connection);
	pn_session_t *ssn = pn_session(d.connection);
	pn_session_open(ssn);
	pn_link_t *l = pn_sender(ssn, "bench-sender");
	pn_terminus_set_address(pn_link_source(l), "bench-client");
	pn_terminus_set_address(pn_link_target(l), "bench-queue");
	pn_link_set_snd_settle_mode(l, c->settled ? PN_SND_SETTLED : PN_SND_UNSETTLED);
	pn_link_open(l);
	c->r->conns++;
	snd_write(c, &d);
	if (!snd_feed(c, &d, c->data, c->open) || !snd_feed(c, &d, c->data + c->open, c->attach - c->open)) goto done;
	if (pn_link_credit(l) < n) {
		snd_fail(c, NULL, "the link has too little credit after the setup");
		goto done;
	}
	for (int64_t first = 0; first < n; first += c->batch) {
		int64_t last = first + c->batch < n ? first + c->batch : n;
		for (int64_t i = first; i < last; i++) {
			char tag[4] = {(char)(i >> 24), (char)(i >> 16), (char)(i >> 8), (char)i};
			pn_delivery_t *dl = pn_delivery(l, pn_dtag(tag, 4));
			if (pn_link_send(l, c->msg, c->msglen) != (ssize_t)c->msglen) { snd_fail(c, NULL, "pn_link_send"); goto done; }
			pn_link_advance(l);
			if (c->settled) pn_delivery_settle(dl);
			c->r->sent++;
		}
		snd_write(c, &d);
		if (c->r->failed) goto done;
		if (!c->settled) {
			int64_t b = first / c->batch, full = first + c->batch < c->msgs ? first + c->batch : c->msgs;
			int ok = last == full ? snd_feed(c, &d, c->data + c->disps[b], c->disps[b + 1] - c->disps[b])
			                      : snd_feed(c, &d, c->shortdisp, c->shortlen);
			if (!ok) goto done;
		}
	}
	snd_feed(c, &d, c->data + c->tail, c->len - c->tail);
done:
	pn_connection_driver_destroy(&d);
}

// snd_run sends n messages: whole connections of msgs, then one of the rest.
static void snd_run(snd_ctx_t *c, int64_t n) {
	while (n > 0 && !c->r->failed) {
		int64_t k = n < c->msgs ? n : c->msgs;
		snd_conn(c, k);
		n -= k;
	}
}
*/
import "C"

import (
	"fmt"
	"unsafe"
)

func init() {
	Senders = append(Senders, Sender{Name: "proton", New: newProtonSender})
}

// newProtonSender copies the stream and the message into C memory and
// returns its run.
func newProtonSender(s *SenderStream, capture bool) (SenderRun, error) {
	data := newCInput(s.Data)
	msg := newCInput(s.Workload.AMQP)
	ctx := (*C.snd_ctx_t)(C.calloc(1, C.size_t(unsafe.Sizeof(C.snd_ctx_t{}))))
	res := (*C.snd_result_t)(C.calloc(1, C.size_t(unsafe.Sizeof(C.snd_result_t{}))))
	var disps *C.int64_t
	if len(s.Disps) > 0 {
		d := make([]int64, len(s.Disps))
		for i, o := range s.Disps {
			d[i] = int64(o)
		}
		disps = (*C.int64_t)(C.CBytes(unsafe.Slice((*byte)(unsafe.Pointer(&d[0])), 8*len(d))))
	}
	ctx.msg, ctx.msglen = msg.p, msg.n
	if s.Settled {
		ctx.settled = 1
	}
	ctx.batch, ctx.msgs = SendBatch, C.int64_t(s.Msgs)
	ctx.data, ctx.len = data.p, data.n
	ctx.open, ctx.attach, ctx.tail = C.size_t(s.Open), C.size_t(s.Attach), C.size_t(s.Tail)
	ctx.disps = disps
	if capture {
		ctx.capture = 1
	}
	ctx.r = res
	var short []byte
	return SenderRun{
		Run: func(n int) (SenderResult, error) {
			*res = C.snd_result_t{}
			ctx.caplen = 0
			// The last connection's last batch, when short, is answered
			// by a disposition of the messages it sent.
			if last := n - (n-1)/s.Msgs*s.Msgs; !s.Settled && n > 0 && last%SendBatch != 0 && last < s.Msgs {
				first := last / SendBatch * SendBatch
				short = AppendAcceptFrame(short[:0], uint32(first), uint32(last-1))
				if len(short) > len(ctx.shortdisp) {
					return SenderResult{}, fmt.Errorf("proton: a disposition of %d bytes", len(short))
				}
				C.memcpy(unsafe.Pointer(&ctx.shortdisp[0]), unsafe.Pointer(&short[0]), C.size_t(len(short)))
				ctx.shortlen = C.size_t(len(short))
			}
			C.snd_run(ctx, C.int64_t(n))
			r := SenderResult{Sent: int(res.sent), Accepted: int(res.accepted), Conns: int(res.conns), Out: int64(res.out)}
			if capture && ctx.caplen > 0 {
				r.Written = C.GoBytes(unsafe.Pointer(ctx.cap), C.int(ctx.caplen))
			}
			if res.failed != 0 {
				return r, fmt.Errorf("proton: %s", C.GoString(&res.cond[0]))
			}
			return r, nil
		},
		Close: func() {
			data.free()
			msg.free()
			C.free(unsafe.Pointer(disps))
			C.free(unsafe.Pointer(ctx.cap))
			C.free(unsafe.Pointer(ctx))
			C.free(unsafe.Pointer(res))
		},
	}, nil
}
