package bench

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/amqpsax/amqpsax"
	"github.com/google/uuid"
	"github.com/tinylib/msgp/msgp"
)

// Workload is one benchmark input: an AMQP message built from a model
// with fixed seeds, so every run and every machine measures the same
// bytes.
type Workload struct {
	Name  string
	Model []Described // the message's sections
	AMQP  []byte      // the encoded message

	Values int    // what a decoder reporting every value sees (Digest.Values)
	Digest Digest // of the whole message, descriptors included

	// The answers of the route task: properties.to and the application
	// property "tenant".
	To, Tenant string

	// Workloads with a typed form: the amqp-value body as typed Go values
	// and its Digest (Values 0).
	Longs      []int64 // the array of longs
	BodyDigest Digest

	// Mobile shapes only: the body as typed Go values, and the same
	// content as JSON and as MessagePack.
	Mobile     bool
	Strings    []string          // the string-array shape
	StringMap  map[string]string // the map shape
	JSON, Msgp []byte
}

// The descriptors of message sections (AMQP 1.0 part 3 §3.2).
const (
	descHeader     = uint64(amqpsax.DescriptorHeader)
	descAnnots     = uint64(amqpsax.DescriptorMessageAnnotations)
	descProps      = uint64(amqpsax.DescriptorProperties)
	descAppProps   = uint64(amqpsax.DescriptorApplicationProperties)
	descData       = uint64(amqpsax.DescriptorData)
	descAMQPValue  = uint64(amqpsax.DescriptorAMQPValue)
	routeTo        = "orders/eu-west-1/partition-07"
	routeTenant    = "acme-logistics"
	baseTimeMillis = 1_767_225_600_000 // 2026-01-01T00:00:00Z
)

// Workloads returns every workload, built once.
var Workloads = sync.OnceValue(func() []*Workload {
	return []*Workload{
		build("small", dataBody(1, 64)),
		build("medium", withAnnotations(valueBody(mixedMap(3, 50)))),
		build("data-64k", dataBody(4, 64<<10)),
		build("data-1m", dataBody(5, 1<<20)),
		build("ints-10k", valueBody(intList(6, 10_000))),
		build("strings-10k", valueBody(stringList(7, 10_000))),
		typed(build("longs-10k", valueBody(longArray(8, 10_000)))),
		mobile(build("mobile-strings-50k", valueBody(fixedStrings(9, 50_000, 100)))),
		mobile(build("mobile-map-30k", valueBody(stringMap(10, 30_000, 100)))),
	}
})

// body is what follows the envelope: the sections of the message after
// application-properties, and whether message annotations come first.
type body struct {
	sections    []Described
	annotations bool
}

func dataBody(seed uint64, n int) body {
	r := rng(seed)
	data := make(Binary, n)
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	return body{sections: []Described{{descData, data}}}
}

func valueBody(v any) body { return body{sections: []Described{{descAMQPValue, v}}} }

func withAnnotations(b body) body { b.annotations = true; return b }

// build makes a message: header, (message annotations), properties, five
// application properties, then the body.
func build(name string, b body) *Workload {
	r := rng(0xa3c9)
	ts := Timestamp(baseTimeMillis)
	msg := []Described{{descHeader, List{
		true,           // durable
		uint8(6),       // priority
		uint32(30_000), // ttl
		false,          // first-acquirer
		uint32(2),      // delivery-count
	}}}
	if b.annotations {
		msg = append(msg, Described{descAnnots, Map{
			{Symbol("x-opt-sequence-number"), int64(48_213_557)},
			{Symbol("x-opt-offset"), "1219441760"},
			{Symbol("x-opt-enqueued-time"), ts - 1500},
			{Symbol("x-opt-partition-key"), "device-4411"},
			{Symbol("x-opt-partition-id"), int32(7)},
			{Symbol("x-opt-locked-until"), ts + 60_000},
			{Symbol("x-opt-publisher"), Symbol("telemetry-gateway")},
			{Symbol("x-opt-scheduled-enqueue-time"), ts + 5_000},
		}})
	}
	id := uuidFrom(r)
	msg = append(msg,
		Described{descProps, List{
			"msg-" + id.String(),       // message-id
			Binary("svc-order-ingest"), // user-id
			routeTo,                    // to
			"order.created",            // subject
			"orders/replies/7f3a",      // reply-to
			"corr-000184467",           // correlation-id
			Symbol("application/json"), // content-type
			Symbol("identity"),         // content-encoding
			ts + 86_400_000,            // absolute-expiry-time
			ts,                         // creation-time
			"order-184467",             // group-id
			uint32(3),                  // group-sequence
			"orders/replies",           // reply-to-group-id
		}},
		Described{descAppProps, Map{
			{"tenant", routeTenant},
			{"event-version", int32(3)},
			{"trace-id", "4bf92f3577b34da6a3ce929d0e0e4736"},
			{"retry", false},
			{"published-at", ts - 20},
		}},
	)
	msg = append(msg, b.sections...)
	w := &Workload{Name: name, Model: msg, AMQP: AppendMessage(nil, msg), To: routeTo, Tenant: routeTenant}
	w.Digest = DigestOf(msg)
	for _, s := range msg {
		w.Values += countValues(s)
	}
	w.Digest.Values = w.Values
	return w
}

// typed fills in the typed form of an array-of-longs body.
func typed(w *Workload) *Workload {
	w.Longs = w.Model[len(w.Model)-1].Value.([]int64)
	w.BodyDigest = DigestOf(w.Longs)
	return w
}

// mobile fills in the typed, JSON and MessagePack forms of a mobile
// shape's body.
func mobile(w *Workload) *Workload {
	w.Mobile = true
	body := w.Model[len(w.Model)-1].Value
	var err error
	switch v := body.(type) {
	case []string:
		w.Strings = v
		w.JSON, err = json.Marshal(v)
		w.Msgp = msgp.AppendArrayHeader(nil, uint32(len(v)))
		for _, s := range v {
			w.Msgp = msgp.AppendString(w.Msgp, s)
		}
	case Map:
		w.StringMap = make(map[string]string, len(v))
		w.Msgp = msgp.AppendMapHeader(nil, uint32(len(v)))
		for _, kv := range v {
			k, s := kv.Key.(string), kv.Value.(string)
			w.StringMap[k] = s
			w.Msgp = msgp.AppendString(msgp.AppendString(w.Msgp, k), s)
		}
		w.JSON, err = json.Marshal(w.StringMap)
	default:
		panic("bench: mobile shape of " + fmt.Sprintf("%T", body))
	}
	if err != nil {
		panic(err)
	}
	w.BodyDigest = DigestOf(body)
	return w
}

func rng(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5ca1ab1e)) }

func uuidFrom(r *rand.Rand) uuid.UUID {
	var u uuid.UUID
	for i := range u {
		u[i] = byte(r.Uint32())
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return u
}

// The runes text is made of: mostly ASCII, some two-, three- and
// four-byte UTF-8. None needs escaping in JSON.
var (
	asciiRunes = []rune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 -_.:/")
	wideRunes  = []rune("éüßçøñжяΩλ€中日本語한글ッ😀🚀𝄞")
)

// text returns a string of exactly n bytes of valid UTF-8, about one
// rune in eight multi-byte.
func text(r *rand.Rand, n int) string {
	var sb strings.Builder
	sb.Grow(n)
	for sb.Len() < n {
		c := asciiRunes[r.IntN(len(asciiRunes))]
		if r.IntN(8) == 0 {
			c = wideRunes[r.IntN(len(wideRunes))]
		}
		if sb.Len()+utf8.RuneLen(c) > n {
			c = asciiRunes[r.IntN(len(asciiRunes))]
		}
		sb.WriteRune(c)
	}
	return sb.String()
}

// mixedMap is a map of n string keys to values of every common type.
func mixedMap(seed uint64, n int) Map {
	r := rng(seed)
	m := make(Map, 0, n)
	for i := range n {
		var v any
		switch i % 12 {
		case 0:
			v = text(r, 5+r.IntN(36))
		case 1:
			v = int32(r.Int32N(1000))
		case 2:
			v = r.Int64()
		case 3:
			v = r.Float64() * 1e4
		case 4:
			v = r.IntN(2) == 1
		case 5:
			v = Timestamp(baseTimeMillis + r.Int64N(1e9))
		case 6:
			v = uuidFrom(r)
		case 7:
			b := make(Binary, 16)
			for j := range b {
				b[j] = byte(r.Uint32())
			}
			v = b
		case 8:
			v = Symbol(fmt.Sprintf("sym-%d", r.IntN(100)))
		case 9:
			v = uint64(r.Uint32())
		case 10:
			v = nil
		default:
			v = List{int32(i), text(r, 8)}
		}
		m = append(m, KV{fmt.Sprintf("field-%02d", i), v})
	}
	return m
}

// intList is a list of n ints, half small (smallint), half full width.
func intList(seed uint64, n int) List {
	r := rng(seed)
	l := make(List, n)
	for i := range l {
		if i%2 == 0 {
			l[i] = int32(r.IntN(256) - 128)
		} else {
			l[i] = r.Int32()
		}
	}
	return l
}

// stringList is a list of n strings of 5 to 40 bytes.
func stringList(seed uint64, n int) List {
	r := rng(seed)
	l := make(List, n)
	for i := range l {
		l[i] = text(r, 5+r.IntN(36))
	}
	return l
}

func longArray(seed uint64, n int) []int64 {
	r := rng(seed)
	a := make([]int64, n)
	for i := range a {
		a[i] = r.Int64() >> r.IntN(63)
		if r.IntN(2) == 0 {
			a[i] = -a[i]
		}
	}
	return a
}

func fixedStrings(seed uint64, n, size int) []string {
	r := rng(seed)
	a := make([]string, n)
	for i := range a {
		a[i] = text(r, size)
	}
	return a
}

func stringMap(seed uint64, n, size int) Map {
	r := rng(seed)
	m := make(Map, n)
	for i := range m {
		m[i] = KV{fmt.Sprintf("user-%06d", i), text(r, size)}
	}
	return m
}
