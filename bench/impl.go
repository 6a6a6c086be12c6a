package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	amqp "github.com/Azure/go-amqp"
	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/dispatch"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/message"
	"github.com/amqpsax/amqpsax/stream"
	"github.com/google/uuid"
	"github.com/tinylib/msgp/msgp"
)

// This file lists the implementations compared on each workload: Impl
// and Op, then one constructor per implementation, grouped by task —
// decoding (go-amqp, dispatch, the cursor, encoding/json, msgp), skipping
// a message's sections, encoding — each checked against the workload's
// digest before it is timed.

// The tasks every implementation is measured at.
const (
	// Decode reads the whole message (or, for JSON and MessagePack, the
	// same body in that format).
	Decode = "Decode"
	// Skip steps over the message's top-level values without reading
	// them.
	Skip = "Skip"
	// Encode writes the message (or the body, for the typed encoders).
	Encode = "Encode"
	// Route reads properties.to and the application property "tenant"
	// and nothing else it does not have to.
	Route = "Route"
)

// Impl is one implementation of one task. Each benchmark and each test
// case is an Impl applied to a Workload: the benchmark calls Op.Run in
// its loop, the test calls Run and then Check, twice, so a broken
// benchmark fails CI.
type Impl struct {
	Task, Name string
	// Input is the bytes the implementation reads (for b.SetBytes);
	// nil means the AMQP message.
	Input func(*Workload) []byte
	// Only, when set, limits the Impl to the workloads it accepts (JSON,
	// MessagePack and typed implementations need a typed or foreign form).
	Only func(*Workload) bool
	New  func(*Workload) Op
}

// Op is an Impl made ready for one workload: reusable state allocated,
// and warm after its first Run.
type Op struct {
	// Run performs the task once.
	Run func() error
	// RunN, when set, performs the task n times in one call (for C
	// implementations, so that one cgo call is paid per benchmark run,
	// not per operation). Run is then RunN(1).
	RunN func(n int) error
	// Check compares what the last Run produced with the workload.
	Check func() error
	// Close, when set, frees what New allocated outside the Go heap.
	Close func()
}

func (op *Op) close() {
	if op.Close != nil {
		op.Close()
	}
}

// Applies reports whether im runs on w.
func (im *Impl) Applies(w *Workload) bool { return im.Only == nil || im.Only(w) }

func isMobile(w *Workload) bool { return w.Mobile }
func isTyped(w *Workload) bool  { return w.Mobile || w.Longs != nil }

// InputOf returns the bytes im reads for w.
func (im *Impl) InputOf(w *Workload) []byte {
	if im.Input != nil {
		return im.Input(w)
	}
	return w.AMQP
}

// Impls lists every implementation; proton.go adds Proton-C's under the
// build tag proton.
var Impls = []Impl{
	// Decode.
	{Task: Decode, Name: "goamqp", New: decodeGoAMQP},
	{Task: Decode, Name: "dispatch-nop", New: decodeDispatchNop},
	{Task: Decode, Name: "dispatch-keep", New: decodeDispatchKeep},
	{Task: Decode, Name: "stream-walk", New: decodeStreamWalk},
	{Task: Decode, Name: "stream-typed", Only: isTyped, New: decodeStreamTyped},
	{Task: Decode, Name: "stream-views", Only: isMobile, New: decodeStreamViews},
	{Task: Decode, Name: "json-any", Only: isMobile, Input: jsonInput, New: decodeJSONAny},
	{Task: Decode, Name: "json-typed", Only: isMobile, Input: jsonInput, New: decodeJSONTyped},
	{Task: Decode, Name: "msgp-zc", Only: isMobile, Input: msgpInput, New: decodeMsgpZC},
	{Task: Decode, Name: "msgp-typed", Only: isMobile, Input: msgpInput, New: decodeMsgpTyped},

	// Skip.
	{Task: Skip, Name: "stream", New: skipStream},
	{Task: Skip, Name: "dispatch", New: skipDispatch},
	{Task: Skip, Name: "message-scan", New: skipMessage},
	{Task: Skip, Name: "msgp", Only: isMobile, Input: msgpInput, New: skipMsgp},

	// Encode.
	{Task: Encode, Name: "goamqp", New: encodeGoAMQP},
	{Task: Encode, Name: "dispatch-writer", New: encodeWriter},
	{Task: Encode, Name: "append", New: encodeAppend},
	{Task: Encode, Name: "append-typed", Only: isMobile, Input: bodyInput, New: encodeAppendTyped},
	{Task: Encode, Name: "json-typed", Only: isMobile, Input: jsonInput, New: encodeJSON},
	{Task: Encode, Name: "msgp-typed", Only: isMobile, Input: msgpInput, New: encodeMsgp},

	// Route.
	{Task: Route, Name: "goamqp", New: routeGoAMQP},
	{Task: Route, Name: "stream", New: routeStream},
	{Task: Route, Name: "dispatch", New: routeDispatch},
	{Task: Route, Name: "message", New: routeMessage},
}

func jsonInput(w *Workload) []byte { return w.JSON }
func msgpInput(w *Workload) []byte { return w.Msgp }
func bodyInput(w *Workload) []byte { return AppendValue(nil, w.Model[len(w.Model)-1].Value) }

func sameDigest(got, want Digest) error {
	if got != want {
		return fmt.Errorf("digest\n got %v\nwant %v", got, want)
	}
	return nil
}

// --- Decode ---------------------------------------------------------------

func decodeGoAMQP(w *Workload) Op {
	var m *amqp.Message
	return Op{
		Run: func() error {
			m = new(amqp.Message)
			return m.UnmarshalBinary(w.AMQP)
		},
		Check: func() error { return sameDigest(digestGoAMQP(m), w.Digest.Leaves()) },
	}
}

// digestGoAMQP is the Digest of a go-amqp Message: its sections'
// descriptors (which go-amqp does not keep, so they are added by section)
// and all its values.
func digestGoAMQP(m *amqp.Message) Digest {
	var d Digest
	section := func(desc uint64, v any) {
		d.uint(desc)
		d.walk(reflect.ValueOf(v))
	}
	if m.Header != nil {
		section(descHeader, m.Header)
	}
	if m.DeliveryAnnotations != nil {
		section(uint64(amqpsax.DescriptorDeliveryAnnotations), m.DeliveryAnnotations)
	}
	if m.Annotations != nil {
		section(descAnnots, m.Annotations)
	}
	if m.Properties != nil {
		section(descProps, m.Properties)
	}
	if m.ApplicationProperties != nil {
		section(descAppProps, m.ApplicationProperties)
	}
	for _, data := range m.Data {
		section(descData, data)
	}
	for _, seq := range m.Sequence {
		section(uint64(amqpsax.DescriptorAMQPSequence), seq)
	}
	if m.Value != nil {
		section(descAMQPValue, m.Value)
	}
	if m.Footer != nil {
		section(uint64(amqpsax.DescriptorFooter), m.Footer)
	}
	return d
}

func decodeDispatchNop(w *Workload) Op {
	var d dispatch.Decoder
	return Op{
		Run: func() error { return d.DecodeAll(w.AMQP, amqpsax.NopHandler{}) },
		Check: func() error {
			// The no-op handler keeps nothing: decode once more with the
			// same decoder and a handler that digests.
			var h digestHandler
			if err := d.DecodeAll(w.AMQP, &h); err != nil {
				return err
			}
			return sameDigest(h.d, w.Digest)
		},
	}
}

func decodeDispatchKeep(w *Workload) Op {
	var d dispatch.Decoder
	var k keeper
	return Op{
		Run: func() error {
			k.reset()
			return d.DecodeAll(w.AMQP, &k)
		},
		Check: func() error { return sameDigest(DigestOf(k.root), w.Digest.Leaves()) },
	}
}

func decodeStreamWalk(w *Workload) Op {
	var c stream.Cursor
	var d Digest
	return Op{
		Run: func() error {
			d = Digest{}
			c.Reset(w.AMQP)
			return walk(&c, &d)
		},
		Check: func() error { return sameDigest(d, w.Digest) },
	}
}

// walk visits every value under the cursor, reading each primitive with
// its getter (as a Handler is given each value), and digests them.
func walk(c *stream.Cursor, d *Digest) error {
	for {
		if !c.Next() {
			if c.Err() != nil || c.Depth() == 0 {
				return c.Err()
			}
			c.Exit()
			continue
		}
		d.Values++
		switch c.Kind() {
		case amqpsax.KindList, amqpsax.KindMap, amqpsax.KindArray, amqpsax.KindDescribed:
			c.Enter()
		case amqpsax.KindBool:
			d.bool(c.Bool())
		case amqpsax.KindUbyte, amqpsax.KindUshort, amqpsax.KindUint, amqpsax.KindUlong:
			d.uint(c.Uint())
		case amqpsax.KindByte, amqpsax.KindShort, amqpsax.KindInt, amqpsax.KindLong:
			d.int(c.Int())
		case amqpsax.KindFloat:
			d.float(float64(c.Float()))
		case amqpsax.KindDouble:
			d.float(c.Double())
		case amqpsax.KindChar:
			d.int(int64(c.Char()))
		case amqpsax.KindTimestamp:
			d.int(c.Timestamp())
		case amqpsax.KindUUID:
			d.uuid(c.UUID())
		case amqpsax.KindBinary, amqpsax.KindString, amqpsax.KindSymbol:
			d.text(len(c.Bytes()))
		}
	}
}

// bodyValue moves c to the value of the amqp-value section of a message
// and returns true, or false when there is none.
func bodyValue(c *stream.Cursor) bool {
	for c.Next() {
		if c.Kind() != amqpsax.KindDescribed || !c.Enter() {
			continue
		}
		if c.Next() && c.Kind() == amqpsax.KindUlong && c.Uint() == descAMQPValue {
			return c.Next()
		}
		c.Exit()
	}
	return false
}

// decodeStreamTyped decodes the body into typed Go values: []string or
// map[string]string for the mobile shapes, as json-typed and msgp-typed
// do, and []int64 for the array of longs (with Cursor.AppendInts), as
// go-amqp does.
func decodeStreamTyped(w *Workload) Op {
	var c stream.Cursor
	var strs []string
	var m map[string]string
	var longs []int64
	return Op{
		Run: func() error {
			c.Reset(w.AMQP)
			if !bodyValue(&c) {
				return errOr(c.Err(), "no amqp-value")
			}
			n := c.Count()
			if w.Longs != nil {
				longs = c.AppendInts(make([]int64, 0, capped(n)))
				return c.Err()
			}
			if !c.Enter() {
				return c.Err()
			}
			if w.Strings != nil {
				strs = make([]string, 0, capped(n))
				for c.Next() {
					strs = append(strs, string(c.Bytes()))
				}
			} else {
				m = make(map[string]string, capped(n))
				for c.Next() {
					k := string(c.Bytes())
					c.Next()
					m[k] = string(c.Bytes())
				}
			}
			return c.Err()
		},
		Check: func() error {
			if w.Longs != nil {
				return sameDigest(DigestOf(longs), w.BodyDigest)
			}
			return checkTyped(w, strs, m)
		},
	}
}

// decodeStreamViews reads every string of the mobile body as a view,
// knowing the shape (an array, or a map, of strings), and digests them:
// the cursor's analogue of msgp-zc.
func decodeStreamViews(w *Workload) Op {
	var c stream.Cursor
	var d Digest
	return Op{
		Run: func() error {
			d = Digest{}
			c.Reset(w.AMQP)
			if !bodyValue(&c) || !c.Enter() {
				return errOr(c.Err(), "no amqp-value")
			}
			for c.Next() {
				d.text(len(c.Bytes()))
			}
			return c.Err()
		},
		Check: func() error { return sameDigest(d, w.BodyDigest) },
	}
}

func errOr(err error, msg string) error {
	if err != nil {
		return err
	}
	return errors.New(msg)
}

func checkTyped(w *Workload, strs []string, m map[string]string) error {
	if w.Strings != nil {
		return sameDigest(DigestOf(strs), w.BodyDigest)
	}
	return sameDigest(DigestOf(m), w.BodyDigest)
}

func decodeJSONAny(w *Workload) Op {
	var v any
	return Op{
		Run: func() error {
			v = nil
			return json.Unmarshal(w.JSON, &v)
		},
		Check: func() error { return sameDigest(DigestOf(v), w.BodyDigest) },
	}
}

func decodeJSONTyped(w *Workload) Op {
	var strs []string
	var m map[string]string
	return Op{
		Run: func() error {
			if w.Strings != nil {
				strs = nil
				return json.Unmarshal(w.JSON, &strs)
			}
			m = nil
			return json.Unmarshal(w.JSON, &m)
		},
		Check: func() error { return checkTyped(w, strs, m) },
	}
}

// decodeMsgpZC reads every string of the MessagePack body without
// copying (ReadStringZC), digesting them: msgp's analogue of stream-walk.
func decodeMsgpZC(w *Workload) Op {
	var d Digest
	return Op{
		Run: func() (err error) {
			d, err = msgpDigest(w.Msgp, w.Strings == nil)
			return err
		},
		Check: func() error { return sameDigest(d, w.BodyDigest) },
	}
}

// msgpDigest digests a MessagePack array of strings, or with pairs a map
// of strings to strings.
func msgpDigest(b []byte, pairs bool) (Digest, error) {
	var d Digest
	var n uint32
	var err error
	if pairs {
		n, b, err = msgp.ReadMapHeaderBytes(b)
	} else {
		n, b, err = msgp.ReadArrayHeaderBytes(b)
	}
	if err != nil {
		return d, err
	}
	strs := int(n)
	if pairs {
		strs *= 2
	}
	for range strs {
		var s []byte
		if s, b, err = msgp.ReadStringZC(b); err != nil {
			return d, err
		}
		d.text(len(s))
	}
	return d, nil
}

func decodeMsgpTyped(w *Workload) Op {
	var strs []string
	var m map[string]string
	return Op{
		Run: func() error {
			b := w.Msgp
			var n uint32
			var err error
			if w.Strings != nil {
				if n, b, err = msgp.ReadArrayHeaderBytes(b); err != nil {
					return err
				}
				strs = make([]string, n)
				for i := range strs {
					if strs[i], b, err = msgp.ReadStringBytes(b); err != nil {
						return err
					}
				}
				return nil
			}
			if n, b, err = msgp.ReadMapHeaderBytes(b); err != nil {
				return err
			}
			m = make(map[string]string, n)
			for range n {
				var k, v string
				if k, b, err = msgp.ReadStringBytes(b); err != nil {
					return err
				}
				if v, b, err = msgp.ReadStringBytes(b); err != nil {
					return err
				}
				m[k] = v
			}
			return nil
		},
		Check: func() error { return checkTyped(w, strs, m) },
	}
}

// --- Skip -----------------------------------------------------------------

// skipMessage finds every section with message.Scan, O(1) per section.
func skipMessage(w *Workload) Op {
	var n int
	return Op{
		Run: func() error {
			s, err := message.Scan(w.AMQP)
			n = 0
			for _, sec := range [][]byte{s.Header, s.DeliveryAnnotations, s.MessageAnnotations,
				s.Properties, s.ApplicationProperties, s.Body, s.Footer} {
				if sec != nil {
					n++
				}
			}
			return err
		},
		// Body counts once however many sections it has: every workload has one.
		Check: func() error { return sameCount("sections", n, len(w.Model)) },
	}
}

func skipStream(w *Workload) Op {
	var c stream.Cursor
	var n int
	return Op{
		Run: func() error {
			c.Reset(w.AMQP)
			n = 0
			for c.Next() {
				n++
			}
			return c.Err()
		},
		Check: func() error { return sameCount("sections", n, len(w.Model)) },
	}
}

func sameCount(what string, got, want int) error {
	if got != want {
		return fmt.Errorf("%s: got %d, want %d", what, got, want)
	}
	return nil
}

// sectionSkipper counts top-level described values and skips each.
type sectionSkipper struct {
	amqpsax.NopHandler
	n int
}

func (s *sectionSkipper) OnDescribedStart() error { s.n++; return amqpsax.SkipValue }

func skipDispatch(w *Workload) Op {
	var d dispatch.Decoder
	var h sectionSkipper
	return Op{
		Run: func() error {
			h.n = 0
			return d.DecodeAll(w.AMQP, &h)
		},
		Check: func() error { return sameCount("sections", h.n, len(w.Model)) },
	}
}

func skipMsgp(w *Workload) Op {
	var rest []byte
	return Op{
		Run: func() (err error) {
			rest, err = msgp.Skip(w.Msgp)
			return err
		},
		Check: func() error { return sameCount("bytes left", len(rest), 0) },
	}
}

// --- Encode ---------------------------------------------------------------

// decodedGoAMQP is the go-amqp Message of w, decoded once, for Marshal.
func decodedGoAMQP(w *Workload) *amqp.Message {
	m := new(amqp.Message)
	if err := m.UnmarshalBinary(w.AMQP); err != nil {
		panic(err)
	}
	return m
}

func encodeGoAMQP(w *Workload) Op {
	m := decodedGoAMQP(w)
	var out []byte
	return Op{
		Run: func() (err error) {
			out, err = m.MarshalBinary()
			return err
		},
		Check: func() error {
			m2 := new(amqp.Message)
			if err := m2.UnmarshalBinary(out); err != nil {
				return err
			}
			return sameDigest(digestGoAMQP(m2), w.Digest.Leaves())
		},
	}
}

// dispatchDigest digests data with dispatch, for the encoders' checks.
func dispatchDigest(data []byte) (Digest, error) {
	var h digestHandler
	var d dispatch.Decoder
	err := d.DecodeAll(data, &h)
	return h.d, err
}

// encodeWriter re-encodes the message: dispatch into an encode.Writer.
func encodeWriter(w *Workload) Op {
	var d dispatch.Decoder
	var wr encode.Writer
	return Op{
		Run: func() error {
			wr.Reset()
			return d.DecodeAll(w.AMQP, &wr)
		},
		Check: func() error {
			got, err := dispatchDigest(wr.Bytes())
			if err != nil {
				return err
			}
			return sameDigest(got, w.Digest)
		},
	}
}

// encodeAppend encodes the message from its Go values (the model, a tree
// of any, as go-amqp's Message holds any) with the Append functions.
func encodeAppend(w *Workload) Op {
	var buf []byte
	return Op{
		Run: func() error {
			buf = AppendMessage(buf[:0], w.Model)
			return nil
		},
		Check: func() error {
			if !bytes.Equal(buf, w.AMQP) {
				return errors.New("append: bytes differ from the workload's")
			}
			return nil
		},
	}
}

// encodeAppendTyped encodes the mobile body from []string or
// map[string]string, as msgp's and json's typed encoders do.
func encodeAppendTyped(w *Workload) Op {
	var buf []byte
	return Op{
		Run: func() error {
			if w.Strings != nil {
				buf = AppendStringArray(buf[:0], w.Strings)
			} else {
				buf = AppendStringMap(buf[:0], w.StringMap)
			}
			return nil
		},
		Check: func() error {
			got, err := dispatchDigest(buf)
			if err != nil {
				return err
			}
			return sameDigest(got.Leaves(), w.BodyDigest)
		},
	}
}

func encodeJSON(w *Workload) Op {
	var out []byte
	return Op{
		Run: func() (err error) {
			if w.Strings != nil {
				out, err = json.Marshal(w.Strings)
			} else {
				out, err = json.Marshal(w.StringMap)
			}
			return err
		},
		Check: func() error {
			if !bytes.Equal(out, w.JSON) {
				return errors.New("json: bytes differ from the workload's")
			}
			return nil
		},
	}
}

// encodeMsgp encodes the body as msgp's generated code would: a header,
// then AppendString per element (ranging over the Go map for the map).
func encodeMsgp(w *Workload) Op {
	var buf []byte
	return Op{
		Run: func() error {
			if w.Strings != nil {
				buf = msgp.AppendArrayHeader(buf[:0], uint32(len(w.Strings)))
				for _, s := range w.Strings {
					buf = msgp.AppendString(buf, s)
				}
				return nil
			}
			buf = msgp.AppendMapHeader(buf[:0], uint32(len(w.StringMap)))
			for k, v := range w.StringMap {
				buf = msgp.AppendString(msgp.AppendString(buf, k), v)
			}
			return nil
		},
		Check: func() error {
			got, err := msgpDigest(buf, w.Strings == nil)
			if err != nil {
				return err
			}
			return sameDigest(got, w.BodyDigest)
		},
	}
}

// --- Route ----------------------------------------------------------------

func checkRoute(w *Workload, to, tenant []byte) error {
	if string(to) != w.To || string(tenant) != w.Tenant {
		return fmt.Errorf("route: got to=%q tenant=%q, want %q %q", to, tenant, w.To, w.Tenant)
	}
	return nil
}

// routeGoAMQP must unmarshal the whole message to read two fields.
func routeGoAMQP(w *Workload) Op { return goAMQPRouteOf(w, w.AMQP) }

// goAMQPRouteOf reads the route fields of the message payload (w's, or
// a view of it) as go-amqp can: the whole message unmarshalled into a new
// Message, then the two fields read from it.
func goAMQPRouteOf(w *Workload, payload []byte) Op {
	var to, tenant string
	return Op{
		Run: func() error {
			m := new(amqp.Message)
			if err := m.UnmarshalBinary(payload); err != nil {
				return err
			}
			to, tenant = "", ""
			if m.Properties != nil && m.Properties.To != nil {
				to = *m.Properties.To
			}
			tenant, _ = m.ApplicationProperties["tenant"].(string)
			return nil
		},
		Check: func() error { return checkRoute(w, []byte(to), []byte(tenant)) },
	}
}

// routeMessage does the route task with package message: Scan, then the
// properties accessor and a lookup in the application properties.
func routeMessage(w *Workload) Op {
	var to, tenant []byte
	return Op{
		Run: func() (err error) {
			to, tenant, err = messageRoute(w.AMQP)
			return err
		},
		Check: func() error { return checkRoute(w, to, tenant) },
	}
}

// messageRoute reads the route task's two fields of msg with package
// message: Scan, the properties accessor, a lookup.
func messageRoute(msg []byte) (to, tenant []byte, err error) {
	s, err := message.Scan(msg)
	if err != nil {
		return nil, nil, err
	}
	p, err := message.ParseProperties(s.Properties)
	if err != nil {
		return nil, nil, err
	}
	v, err := message.Lookup(s.ApplicationProperties, "tenant")
	return p.To, v.Bytes(), err
}

// RouteCursor reads properties.to and the application property "tenant"
// with a cursor, stepping over everything else in O(1) per value skipped.
// The results are views into data.
func RouteCursor(c *stream.Cursor, data []byte) (to, tenant []byte, err error) {
	c.Reset(data)
	for c.Next() {
		if c.Kind() != amqpsax.KindDescribed || !c.Enter() {
			continue
		}
		if c.Next() && c.Kind() == amqpsax.KindUlong {
			switch c.Uint() {
			case descProps:
				if c.Next() && c.Kind() == amqpsax.KindList && c.Enter() {
					// message-id, user-id, to
					if c.Seek(2) && c.Kind() == amqpsax.KindString {
						to = c.Bytes()
					}
					c.Exit()
				}
			case descAppProps:
				if c.Next() && c.Kind() == amqpsax.KindMap && c.Enter() {
					for c.Next() {
						key := c.Kind() == amqpsax.KindString && string(c.Bytes()) == "tenant"
						if !c.Next() {
							break
						}
						if key && c.Kind() == amqpsax.KindString {
							tenant = c.Bytes()
						}
					}
					c.Exit()
				}
			}
		}
		c.Exit()
	}
	return to, tenant, c.Err()
}

func routeStream(w *Workload) Op {
	var c stream.Cursor
	var to, tenant []byte
	return Op{
		Run: func() (err error) {
			to, tenant, err = RouteCursor(&c, w.AMQP)
			return err
		},
		Check: func() error { return checkRoute(w, to, tenant) },
	}
}

// router is the route task as a dispatch Handler: it enters the
// properties list and the application-properties map, returns SkipValue
// for every other section's value, and SkipAll once it has both fields.
// Views are valid only during a call, so it copies the two fields into
// buffers it reuses.
type router struct {
	depth   int    // 0 top level, 1 in a section, 2 in properties or application-properties
	desc    bool   // at depth 1: the descriptor has been read
	section uint64 // at depth 1 and 2
	idx     int    // at depth 2: values read so far
	isKey   bool   // at depth 2 in application-properties: the last key was "tenant"
	to      []byte
	tenant  []byte
	found   int
}

var _ amqpsax.Handler = (*router)(nil)

func (r *router) reset() {
	*r = router{to: r.to[:0], tenant: r.tenant[:0]}
}

// leaf handles a primitive value; s is its bytes for strings.
func (r *router) leaf(s []byte, isString bool) error {
	switch r.depth {
	case 1:
		r.desc = true // a primitive section value (data's binary) or the descriptor
		return nil
	case 2:
		i := r.idx
		r.idx++
		switch r.section {
		case descProps:
			if i == 2 && isString {
				r.to = append(r.to[:0], s...)
				r.found++
			}
		case descAppProps:
			if i%2 == 0 {
				r.isKey = isString && string(s) == "tenant"
			} else if r.isKey && isString {
				r.tenant = append(r.tenant[:0], s...)
				r.found++
			}
		}
	}
	return nil
}

func (r *router) OnUlong(v uint64) error {
	if r.depth == 1 && !r.desc {
		r.desc = true
		r.section = v
		return nil
	}
	return r.leaf(nil, false)
}

func (r *router) OnNull() error                         { return r.leaf(nil, false) }
func (r *router) OnBool(bool) error                     { return r.leaf(nil, false) }
func (r *router) OnUbyte(uint8) error                   { return r.leaf(nil, false) }
func (r *router) OnUshort(uint16) error                 { return r.leaf(nil, false) }
func (r *router) OnUint(uint32) error                   { return r.leaf(nil, false) }
func (r *router) OnByte(int8) error                     { return r.leaf(nil, false) }
func (r *router) OnShort(int16) error                   { return r.leaf(nil, false) }
func (r *router) OnInt(int32) error                     { return r.leaf(nil, false) }
func (r *router) OnLong(int64) error                    { return r.leaf(nil, false) }
func (r *router) OnFloat(float32) error                 { return r.leaf(nil, false) }
func (r *router) OnDouble(float64) error                { return r.leaf(nil, false) }
func (r *router) OnDecimal32(amqpsax.Decimal32) error   { return r.leaf(nil, false) }
func (r *router) OnDecimal64(amqpsax.Decimal64) error   { return r.leaf(nil, false) }
func (r *router) OnDecimal128(amqpsax.Decimal128) error { return r.leaf(nil, false) }
func (r *router) OnChar(rune) error                     { return r.leaf(nil, false) }
func (r *router) OnTimestamp(int64) error               { return r.leaf(nil, false) }
func (r *router) OnUUID(uuid.UUID) error                { return r.leaf(nil, false) }
func (r *router) OnBinary([]byte) error                 { return r.leaf(nil, false) }
func (r *router) OnSymbol([]byte) error                 { return r.leaf(nil, false) }
func (r *router) OnString(v []byte) error               { return r.leaf(v, true) }
func (r *router) OnArrayStart(int, amqpsax.Kind) error  { r.leaf(nil, false); return amqpsax.SkipValue }
func (r *router) OnArrayEnd() error                     { return nil }
func (r *router) OnListEnd() error                      { r.depth--; return nil }

func (r *router) OnListStart(int) error {
	if r.depth == 1 && r.desc && r.section == descProps {
		r.depth, r.idx = 2, 0
		return nil
	}
	r.leaf(nil, false)
	return amqpsax.SkipValue
}

func (r *router) OnMapStart(int) error {
	if r.depth == 1 && r.desc && r.section == descAppProps {
		r.depth, r.idx = 2, 0
		return nil
	}
	r.leaf(nil, false)
	return amqpsax.SkipValue
}

func (r *router) OnMapEnd() error {
	r.depth--
	if r.found == 2 {
		return amqpsax.SkipAll
	}
	return nil
}

func (r *router) OnDescribedStart() error {
	if r.depth != 0 {
		r.leaf(nil, false)
		return amqpsax.SkipValue
	}
	r.depth, r.desc, r.section = 1, false, 0
	return nil
}

func (r *router) OnDescribedEnd() error { r.depth--; return nil }

func routeDispatch(w *Workload) Op {
	var d dispatch.Decoder
	var r router
	return Op{
		Run: func() error {
			r.reset()
			return d.DecodeAll(w.AMQP, &r)
		},
		Check: func() error { return checkRoute(w, r.to, r.tenant) },
	}
}
