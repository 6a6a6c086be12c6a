//go:build proton

package bench

// Qpid Proton-C's pn_connection_driver as the receiver of a recorded
// stream (see driver.go), for the receiver benchmark. As in proton.go the
// whole loop runs in C: one cgo call receives n messages.
//
// The receiver is a server transport taking SASL ANONYMOUS, with the handler a
// Proton application needs to receive: open each endpoint the peer opens,
// grant the receiving link DriverMsgs credit when it opens, and on each
// complete delivery read its bytes (pn_link_recv: Proton hands a message
// over only by copying it out), advance, and accept and settle it
// (unsettled deliveries) or settle it (pre-settled ones); close what the
// peer closes. Input goes through the driver's own read buffer: the
// stream's setup (header to attach) first, then 64 KiB at a time (pn_connection_driver_read_buffer_sized: what a socket read of
// 64 KiB gives); output is taken from its write buffer and dropped.

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
#include <proton/condition.h>
#include <proton/sasl.h>

typedef struct {
	int64_t delivered, bytes, mismatched, conns, out;
	int failed;
	char cond[256];
} drv_result_t;

typedef struct {
	int credit;
	char *buf;
	size_t cap;
	const char *expect; // when set, every message is compared with it
	size_t explen;
	drv_result_t *r;
} drv_ctx_t;

static void drv_fail(drv_ctx_t *c, pn_condition_t *cond) {
	if (c->r->failed || !cond || !pn_condition_is_set(cond)) return;
	c->r->failed = 1;
	const char *name = pn_condition_get_name(cond), *desc = pn_condition_get_description(cond);
	snprintf(c->r->cond, sizeof c->r->cond, "%s: %s", name ? name : "?", desc ? desc : "");
}

static void drv_event(drv_ctx_t *c, pn_event_t *e) {
	switch (pn_event_type(e)) {
	case PN_CONNECTION_REMOTE_OPEN:
		pn_connection_open(pn_event_connection(e));
		break;
	case PN_SESSION_REMOTE_OPEN:
		// The recorded client wrote every transfer without waiting: a
		// session window that takes a whole stream (Proton 0.37 derives
		// the window from a capacity in bytes over the max frame size).
		pn_session_set_incoming_capacity(pn_event_session(e), (size_t)1 << 31);
		pn_session_open(pn_event_session(e));
		break;
	case PN_LINK_REMOTE_OPEN: {
		pn_link_t *l = pn_event_link(e);
		pn_link_open(l);
		if (pn_link_is_receiver(l)) pn_link_flow(l, c->credit);
		break;
	}
	case PN_DELIVERY: {
		pn_delivery_t *d = pn_event_delivery(e);
		pn_link_t *l = pn_delivery_link(d);
		if (!pn_link_is_receiver(l) || !pn_delivery_readable(d) || pn_delivery_partial(d)) break;
		size_t got = 0;
		ssize_t n;
		while ((n = pn_link_recv(l, c->buf + got, c->cap - got)) > 0) got += n;
		c->r->bytes += got;
		if (c->expect && (got != c->explen || memcmp(c->buf, c->expect, got) != 0)) c->r->mismatched++;
		int presettled = pn_delivery_settled(d);
		pn_link_advance(l);
		if (!presettled) pn_delivery_update(d, PN_ACCEPTED);
		pn_delivery_settle(d);
		c->r->delivered++;
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
		drv_fail(c, pn_transport_condition(pn_event_transport(e)));
		break;
	default:
		break;
	}
}

// drv_conn runs one server connection over data[0:len]: data[0:setup]
// first, answered, then the rest.
static void drv_conn(drv_ctx_t *c, const char *data, size_t setup, size_t len) {
	pn_connection_driver_t d;
	if (pn_connection_driver_init(&d, NULL, NULL)) { c->r->failed = 1; return; }
	pn_transport_set_server(d.transport);
	pn_sasl_allowed_mechs(pn_sasl(d.transport), "ANONYMOUS");
	c->r->conns++;
	size_t off = 0;
	while (off < len && !c->r->failed) {
		pn_rwbytes_t rb = pn_connection_driver_read_buffer_sized(&d, 64 << 10);
		if (rb.size == 0) {
			drv_fail(c, pn_transport_condition(d.transport));
			if (!c->r->failed) { c->r->failed = 1; snprintf(c->r->cond, sizeof c->r->cond, "read side closed at %zu", off); }
			break;
		}
		size_t end = off < setup ? setup : len;
		size_t n = end - off < rb.size ? end - off : rb.size;
		memcpy(rb.start, data + off, n);
		off += n;
		pn_connection_driver_read_done(&d, n);
		pn_event_t *e;
		while ((e = pn_connection_driver_next_event(&d))) drv_event(c, e);
		pn_bytes_t wb = pn_connection_driver_write_buffer(&d);
		if (wb.size) { c->r->out += wb.size; pn_connection_driver_write_done(&d, wb.size); }
	}
	pn_connection_driver_destroy(&d);
}

// drv_run receives n messages from the stream data (msgs messages, ends[i]
// the offset past message i): whole connections, then a prefix of one.
static void drv_run(drv_ctx_t *c, const char *data, size_t setup, size_t len, const int64_t *ends, int64_t msgs, int64_t n) {
	while (n > 0 && !c->r->failed) {
		if (n >= msgs) {
			drv_conn(c, data, setup, len);
			n -= msgs;
		} else {
			drv_conn(c, data, setup, ends[n - 1]);
			n = 0;
		}
	}
}
*/
import "C"

import (
	"fmt"
	"unsafe"
)

func init() {
	Receivers = append(Receivers, Receiver{Name: "proton", New: newProtonReceiver})
}

// newProtonReceiver copies the stream into C memory and returns its run.
func newProtonReceiver(s *DriverStream, check bool) (ReceiverRun, error) {
	data := newCInput(s.Data)
	ends := make([]int64, len(s.Ends))
	for i, e := range s.Ends {
		ends[i] = int64(e)
	}
	cEnds := (*C.int64_t)(C.CBytes(unsafe.Slice((*byte)(unsafe.Pointer(&ends[0])), 8*len(ends))))
	ctx := (*C.drv_ctx_t)(C.calloc(1, C.size_t(unsafe.Sizeof(C.drv_ctx_t{}))))
	res := (*C.drv_result_t)(C.calloc(1, C.size_t(unsafe.Sizeof(C.drv_result_t{}))))
	ctx.credit = C.int(s.Msgs)
	ctx.cap = C.size_t(len(s.Workload.AMQP) + 1)
	ctx.buf = (*C.char)(C.malloc(ctx.cap))
	ctx.r = res
	var expect cInput
	if check {
		expect = newCInput(s.Workload.AMQP)
		ctx.expect, ctx.explen = expect.p, expect.n
	}
	return ReceiverRun{
		Run: func(n int) (ReceiverResult, error) {
			*res = C.drv_result_t{}
			C.drv_run(ctx, data.p, C.size_t(s.Setup), data.n, cEnds, C.int64_t(s.Msgs), C.int64_t(n))
			r := ReceiverResult{Delivered: int(res.delivered), Bytes: int64(res.bytes),
				Mismatched: int(res.mismatched), Conns: int(res.conns), Out: int64(res.out)}
			if res.failed != 0 {
				return r, fmt.Errorf("proton: %s", C.GoString(&res.cond[0]))
			}
			return r, nil
		},
		Close: func() {
			data.free()
			if check {
				expect.free()
			}
			C.free(unsafe.Pointer(cEnds))
			C.free(unsafe.Pointer(ctx.buf))
			C.free(unsafe.Pointer(ctx))
			C.free(unsafe.Pointer(res))
		},
	}, nil
}
