package frame

import (
	"reflect"
	"sort"
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func dispositionSeeds() [][]byte {
	var seeds [][]byte
	for _, d := range []Disposition{
		{Role: RoleReceiver, First: 0, Settled: true, State: DeliveryState{Type: StateAccepted}},
		{Role: RoleReceiver, First: 7, Last: Some[uint32](300), Settled: true, State: DeliveryState{Type: StateReleased}},
		{Role: RoleSender, First: 1 << 31, Settled: true},
		{Role: RoleReceiver, First: 5, State: DeliveryState{Type: StateAccepted}, Batchable: true},
		{Role: RoleReceiver, First: 5},
		{Role: RoleReceiver, First: 5, State: DeliveryState{Type: StateRejected}},
		{Role: RoleReceiver, First: 5, State: DeliveryState{Type: StateModified, DeliveryFailed: true}},
		{Role: RoleReceiver, First: 5, State: DeliveryState{Type: StateReceived, SectionNumber: 1}},
	} {
		seeds = append(seeds, AppendDisposition(nil, d))
	}
	// What peers write: examples/broker's accepted; Proton's trailing
	// nulls, a list32 state, bool 0x56; faults.
	seeds = append(seeds,
		[]byte{0x00, 0x53, 0x15, 0xc0, 0x0d, 0x05, 0x41, 0x70, 0x00, 0x00, 0x03, 0xea, 0x40, 0x41, 0x00, 0x53, 0x24, 0x45},
		[]byte{0x00, 0x53, 0x15, 0xc0, 0x0a, 0x06, 0x41, 0x43, 0x40, 0x41, 0x00, 0x53, 0x24, 0x45, 0x40},
		[]byte{0x00, 0x53, 0x15, 0xc0, 0x12, 0x05, 0x41, 0x52, 0x01, 0x40, 0x41, 0x00, 0x53, 0x24, 0xd0, 0, 0, 0, 4, 0, 0, 0, 0},
		[]byte{0x00, 0x53, 0x15, 0xd0, 0, 0, 0, 0x0e, 0, 0, 0, 0x05, 0x56, 0x01, 0x43, 0x40, 0x56, 0x00, 0x00, 0x53, 0x26, 0x45},
		[]byte{0x00, 0x53, 0x15, 0xc0, 0x02, 0x01, 0x41},
		[]byte{0x00, 0x53, 0x15, 0xc0, 0x03, 0x02, 0x40, 0x43},
		[]byte{0x00, 0x53, 0x15, 0xc0, 0x03, 0x02, 0x41, 0x43, 0x00},
		[]byte{0x00, 0x53, 0x15, 0xc0, 0x08, 0x05, 0x41, 0x43, 0x40, 0x41, 0x00, 0x53, 0x24},
		[]byte{0x00, 0x53, 0x15, 0xc0, 0x07, 0x04, 0x41, 0x43, 0x40, 0x56, 0x02},
	)
	return seeds
}

// sameDisposition: the fast path's disposition is the spec-table
// parser's, every field and the Fields records (its own and its
// state's) alike.
func sameDisposition(a, b Disposition) bool { return reflect.DeepEqual(a, b) }

// TestDispositionFast: the usual outcomes take the fast path, and what
// it gives is what the spec-table parser gives.
func TestDispositionFast(t *testing.T) {
	fast := 0
	for _, s := range dispositionSeeds() {
		fd, ok := parseDispositionFast(s)
		sd, err := parseDispositionSlow(s)
		if !ok {
			continue
		}
		fast++
		if err != nil || !sameDisposition(fd, sd) {
			t.Fatalf("% x: fast %+v, frame %+v %v", s, fd, sd, err)
		}
	}
	if fast < 8 {
		t.Fatalf("only %d of the usual encodings take the fast path", fast)
	}
}

// TestDispositionFastCorpus: every disposition every peer in testdata/
// wrote, through both paths. The two agree on each the fast path takes,
// and it takes all but those whose state has fields or another type.
func TestDispositionFastCorpus(t *testing.T) {
	streams := peerStreams(t)
	names := make([]string, 0, len(streams))
	for name := range streams {
		names = append(names, name)
	}
	sort.Strings(names)
	taken, all := 0, 0
	for _, name := range names {
		for b := streams[name]; len(b) > 0; {
			f, n, err := Split(b, 1<<31-1)
			require.NoError(t, err, name)
			require.NotZero(t, n, name)
			b = b[n:]
			if d, err := Performative(f.Body); f.IsHeader || err != nil || d != amqpsax.DescriptorDisposition {
				continue
			}
			all++
			sd, err := parseDispositionSlow(f.Body)
			require.NoError(t, err, name)
			fd, ok := parseDispositionFast(f.Body)
			if !ok {
				st := sd.State
				assert.True(t, st.Type != StateNone && st.Type != StateAccepted && st.Type != StateReleased || st.Fields.Elements() > 0 || st.Wide() || st.Descriptor == 0,
					"%s: % x: an outcome not taken: %+v", name, f.Body, sd)
				continue
			}
			taken++
			assert.True(t, sameDisposition(fd, sd), "%s: % x: fast %+v, frame %+v", name, f.Body, fd, sd)
		}
	}
	t.Logf("%d of %d dispositions taken", taken, all)
	require.NotZero(t, all)
	assert.Greater(t, taken, all/2)
}

// TestDispositionFastAllocs: the fast path allocates nothing.
func TestDispositionFastAllocs(t *testing.T) {
	body := dispositionSeeds()[0]
	if n := testing.AllocsPerRun(100, func() {
		if _, err := ParseDisposition(body); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("%v allocations a disposition", n)
	}
}

// FuzzDispositionFast holds ParseDisposition's fast path to the
// spec-table parser: whatever it accepts, the parser accepts and
// decodes the same, Fields included (so Append writes it back the same).
func FuzzDispositionFast(f *testing.F) {
	for _, s := range dispositionSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fd, ok := parseDispositionFast(body)
		if !ok {
			return
		}
		sd, err := parseDispositionSlow(body)
		if err != nil || !sameDisposition(fd, sd) {
			t.Fatalf("% x: fast %+v, frame %+v %v", body, fd, sd, err)
		}
	})
}

// BenchmarkParseDisposition: an accepted outcome as examples/broker
// writes it for each message of a blocking Send, through ParseDisposition
// (path=fast) and through the spec table alone (path=table).
func BenchmarkParseDisposition(b *testing.B) {
	body := dispositionSeeds()[8]
	for _, c := range []struct {
		name  string
		parse func([]byte) (Disposition, error)
	}{{"path=fast", ParseDisposition}, {"path=table", parseDispositionSlow}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if d, err := c.parse(body); err != nil || d.First != 1002 {
					b.Fatal(d, err)
				}
			}
		})
	}
}
