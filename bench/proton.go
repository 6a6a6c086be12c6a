//go:build proton

package bench

// Qpid Proton-C, through cgo, for machines with Proton's headers and
// library (Debian: libqpid-proton11-dev). Build with -tags proton.
//
// Every loop runs in C: the benchmark makes one cgo call per b.N round
// and passes b.N in, so the cgo transition (tens of ns) is paid once per
// round and not once per operation. The input is copied into C memory
// once per benchmark, outside the timed loop.

/*
#cgo pkg-config: libqpid-proton
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <proton/codec.h>
#include <proton/message.h>

typedef struct {
	int64_t values, text, textlen, ints;
	uint64_t intsum;
	int64_t floats;
	uint64_t floatsum;
	int64_t bools, trues, uuids;
	uint64_t uuidsum;
} digest_t;

static void dg_uint(digest_t *d, uint64_t v) { d->ints++; d->intsum += v; }
static void dg_text(digest_t *d, size_t n) { d->text++; d->textlen += n; }
static void dg_bool(digest_t *d, int v) { d->bools++; d->trues += v != 0; }
static void dg_float(digest_t *d, double f) { uint64_t u; memcpy(&u, &f, 8); d->floats++; d->floatsum += u; }

// walk visits every node of data from its start, reading each with its
// getter, and digests them.
static void walk(pn_data_t *data, digest_t *d) {
	int depth = 0;
	pn_data_rewind(data);
	for (;;) {
		if (!pn_data_next(data)) {
			if (depth == 0) return;
			pn_data_exit(data);
			depth--;
			continue;
		}
		d->values++;
		switch (pn_data_type(data)) {
		case PN_DESCRIBED: case PN_ARRAY: case PN_LIST: case PN_MAP:
			pn_data_enter(data);
			depth++;
			break;
		case PN_BOOL: dg_bool(d, pn_data_get_bool(data)); break;
		case PN_UBYTE: dg_uint(d, pn_data_get_ubyte(data)); break;
		case PN_USHORT: dg_uint(d, pn_data_get_ushort(data)); break;
		case PN_UINT: dg_uint(d, pn_data_get_uint(data)); break;
		case PN_ULONG: dg_uint(d, pn_data_get_ulong(data)); break;
		case PN_BYTE: dg_uint(d, (uint64_t)(int64_t)pn_data_get_byte(data)); break;
		case PN_SHORT: dg_uint(d, (uint64_t)(int64_t)pn_data_get_short(data)); break;
		case PN_INT: dg_uint(d, (uint64_t)(int64_t)pn_data_get_int(data)); break;
		case PN_LONG: dg_uint(d, (uint64_t)pn_data_get_long(data)); break;
		case PN_CHAR: dg_uint(d, pn_data_get_char(data)); break;
		case PN_TIMESTAMP: dg_uint(d, (uint64_t)pn_data_get_timestamp(data)); break;
		case PN_FLOAT: dg_float(d, pn_data_get_float(data)); break;
		case PN_DOUBLE: dg_float(d, pn_data_get_double(data)); break;
		case PN_UUID: {
			pn_uuid_t u = pn_data_get_uuid(data);
			uint64_t v = 0;
			for (int i = 0; i < 8; i++) v = v << 8 | (uint8_t)u.bytes[i];
			d->uuids++;
			d->uuidsum += v;
			break;
		}
		case PN_BINARY: case PN_STRING: case PN_SYMBOL:
			dg_text(d, pn_data_get_bytes(data).size);
			break;
		default:
			break;
		}
	}
}

// data_loop decodes every top-level value of buf into data and walks the
// tree, n times.
static int64_t data_loop(pn_data_t *data, const char *buf, size_t len, int64_t n, digest_t *d) {
	for (int64_t i = 0; i < n; i++) {
		pn_data_clear(data);
		size_t off = 0;
		while (off < len) {
			ssize_t r = pn_data_decode(data, buf + off, len - off);
			if (r <= 0) return r < 0 ? r : -1;
			off += r;
		}
		memset(d, 0, sizeof *d);
		walk(data, d);
	}
	return 0;
}

static int64_t message_loop(pn_message_t *m, const char *buf, size_t len, int64_t n) {
	for (int64_t i = 0; i < n; i++) {
		int r = pn_message_decode(m, buf, len);
		if (r) return r;
	}
	return 0;
}

static int64_t encode_loop(pn_message_t *m, char *out, size_t cap, int64_t n, size_t *size) {
	for (int64_t i = 0; i < n; i++) {
		*size = cap;
		int r = pn_message_encode(m, out, size);
		if (r) return r;
	}
	return 0;
}

// route_loop decodes the message and reads properties.to and the
// application property "tenant", n times. Proton has no way to skip.
static int64_t route_loop(pn_message_t *m, const char *buf, size_t len, int64_t n, const char **to, pn_bytes_t *tenant) {
	for (int64_t i = 0; i < n; i++) {
		int r = pn_message_decode(m, buf, len);
		if (r) return r;
		*to = pn_message_get_address(m);
		tenant->size = 0;
		pn_data_t *p = pn_message_properties(m);
		pn_data_rewind(p);
		if (pn_data_next(p) && pn_data_type(p) == PN_MAP) {
			pn_data_enter(p);
			while (pn_data_next(p)) {
				pn_bytes_t k = pn_data_type(p) == PN_STRING ? pn_data_get_string(p) : (pn_bytes_t){0, 0};
				if (!pn_data_next(p)) break;
				if (k.size == 6 && memcmp(k.start, "tenant", 6) == 0 && pn_data_type(p) == PN_STRING) {
					*tenant = pn_data_get_string(p);
				}
			}
			pn_data_exit(p);
		}
	}
	return 0;
}

static void str(digest_t *d, const char *s) { if (s) dg_text(d, strlen(s)); }

// message_digest digests a decoded message as digestGoAMQP digests a
// go-amqp Message: each section's descriptor, then its values. Every
// workload has a header and properties; the body section is told apart
// by the inferred flag.
static void message_digest(pn_message_t *m, digest_t *d) {
	digest_t sub;
	memset(d, 0, sizeof *d);
	dg_uint(d, 0x70);
	dg_bool(d, pn_message_is_durable(m));
	dg_uint(d, pn_message_get_priority(m));
	dg_uint(d, pn_message_get_ttl(m));
	dg_bool(d, pn_message_is_first_acquirer(m));
	dg_uint(d, pn_message_get_delivery_count(m));
	pn_data_t *sections[3] = {pn_message_instructions(m), pn_message_annotations(m), pn_message_properties(m)};
	uint64_t descs[3] = {0x71, 0x72, 0x74};
	for (int i = 0; i < 3; i++) {
		if (pn_data_size(sections[i]) == 0) continue;
		dg_uint(d, descs[i]);
		walk(sections[i], d);
	}
	dg_uint(d, 0x73);
	walk(pn_message_id(m), d);
	pn_bytes_t user = pn_message_get_user_id(m);
	if (user.start) dg_text(d, user.size);
	str(d, pn_message_get_address(m));
	str(d, pn_message_get_subject(m));
	str(d, pn_message_get_reply_to(m));
	walk(pn_message_correlation_id(m), d);
	str(d, pn_message_get_content_type(m));
	str(d, pn_message_get_content_encoding(m));
	dg_uint(d, (uint64_t)pn_message_get_expiry_time(m));
	dg_uint(d, (uint64_t)pn_message_get_creation_time(m));
	str(d, pn_message_get_group_id(m));
	dg_uint(d, (uint64_t)(int64_t)pn_message_get_group_sequence(m));
	str(d, pn_message_get_reply_to_group_id(m));
	pn_data_t *body = pn_message_body(m);
	if (pn_data_size(body) > 0) {
		pn_data_rewind(body);
		pn_data_next(body);
		uint64_t desc = 0x77;
		if (pn_message_is_inferred(m)) desc = pn_data_type(body) == PN_BINARY ? 0x75 : 0x76;
		dg_uint(d, desc);
		walk(body, d);
	}
	d->values = 0;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"

	amqp "github.com/Azure/go-amqp"
)

func init() {
	Impls = append(Impls,
		Impl{Task: Decode, Name: "proton-message", New: decodeProtonMessage},
		Impl{Task: Decode, Name: "proton-data", New: decodeProtonData},
		Impl{Task: Encode, Name: "proton-message", New: encodeProton},
		Impl{Task: Route, Name: "proton-message", New: routeProton},
	)
}

// cInput is a copy of an input in C memory.
type cInput struct {
	p *C.char
	n C.size_t
}

func newCInput(b []byte) cInput { return cInput{(*C.char)(C.CBytes(b)), C.size_t(len(b))} }
func (in cInput) free()         { C.free(unsafe.Pointer(in.p)) }

func protonErr(r C.int64_t) error {
	if r != 0 {
		return fmt.Errorf("proton: error %d", int64(r))
	}
	return nil
}

func cDigest(d *C.digest_t) Digest {
	return Digest{
		Values: int(d.values), Text: int(d.text), TextLen: int(d.textlen),
		Ints: int(d.ints), IntSum: uint64(d.intsum),
		Floats: int(d.floats), FloatSum: uint64(d.floatsum),
		Bools: int(d.bools), Trues: int(d.trues),
		UUIDs: int(d.uuids), UUIDSum: uint64(d.uuidsum),
	}
}

// decodeProtonMessage: pn_message_decode, which fills pn_message_t's
// fields and one pn_data_t per map section and for the body.
func decodeProtonMessage(w *Workload) Op {
	in := newCInput(w.AMQP)
	m := C.pn_message()
	runN := func(n int) error { return protonErr(C.message_loop(m, in.p, in.n, C.int64_t(n))) }
	return Op{
		RunN: runN,
		Check: func() error {
			var d C.digest_t
			C.message_digest(m, &d)
			return sameDigest(cDigest(&d), w.Digest.Leaves())
		},
		Close: func() { C.pn_message_free(m); in.free() },
	}
}

// decodeProtonData: pn_data_decode of each section into one pn_data_t,
// then a walk of the whole tree reading every node with its getter.
func decodeProtonData(w *Workload) Op {
	in := newCInput(w.AMQP)
	data := C.pn_data(0)
	var d C.digest_t
	return Op{
		RunN:  func(n int) error { return protonErr(C.data_loop(data, in.p, in.n, C.int64_t(n), &d)) },
		Check: func() error { return sameDigest(cDigest(&d), w.Digest) },
		Close: func() { C.pn_data_free(data); in.free() },
	}
}

// encodeProton: pn_message_encode of the message decoded once.
func encodeProton(w *Workload) Op {
	in := newCInput(w.AMQP)
	m := C.pn_message()
	if r := C.pn_message_decode(m, in.p, in.n); r != 0 {
		panic(fmt.Sprintf("proton: decode %d", int(r)))
	}
	cap := C.size_t(2*len(w.AMQP) + 4096)
	out := (*C.char)(C.malloc(cap))
	var size C.size_t
	return Op{
		RunN: func(n int) error { return protonErr(C.encode_loop(m, out, cap, C.int64_t(n), &size)) },
		Check: func() error {
			// Proton leaves out trailing default header fields; go-amqp
			// fills defaults back in, so compare through it.
			m2 := new(amqp.Message)
			if err := m2.UnmarshalBinary(C.GoBytes(unsafe.Pointer(out), C.int(size))); err != nil {
				return err
			}
			return sameDigest(digestGoAMQP(m2), w.Digest.Leaves())
		},
		Close: func() { C.free(unsafe.Pointer(out)); C.pn_message_free(m); in.free() },
	}
}

func routeProton(w *Workload) Op {
	in := newCInput(w.AMQP)
	m := C.pn_message()
	var to *C.char
	var tenant C.pn_bytes_t
	return Op{
		RunN: func(n int) error {
			return protonErr(C.route_loop(m, in.p, in.n, C.int64_t(n), &to, &tenant))
		},
		Check: func() error {
			if to == nil || tenant.start == nil {
				return errors.New("proton route: field missing")
			}
			return checkRoute(w, []byte(C.GoString(to)), C.GoBytes(unsafe.Pointer(tenant.start), C.int(tenant.size)))
		},
		Close: func() { C.pn_message_free(m); in.free() },
	}
}
