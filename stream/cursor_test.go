package stream

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/dispatch"
	"github.com/amqpsax/amqpsax/internal/cases"
	"github.com/amqpsax/amqpsax/internal/corpus"
	"github.com/amqpsax/amqpsax/internal/trace"
	"github.com/amqpsax/amqpsax/internal/wire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValid(t *testing.T) {
	var c Cursor
	var rec trace.Recorder
	for _, tc := range cases.Valid {
		rec.Reset()
		c.Reset(cases.Bytes(tc.Hex))
		require.NoError(t, walk(&c, &rec), tc.String())
		assert.Equal(t, tc.Trace, rec.String(), tc.String())
		assert.Zero(t, c.Depth(), tc.Name)
	}
}

func assertFault(t *testing.T, err, cause error, off int, msg string) {
	t.Helper()
	require.Error(t, err, msg)
	assert.ErrorIs(t, err, cause, msg)
	var e *amqpsax.Error
	require.True(t, errors.As(err, &e), msg)
	assert.Equal(t, off, e.Offset, "%s: %v", msg, err)
	assert.True(t, strings.HasPrefix(err.Error(), "stream: "), err.Error())
}

func TestInvalid(t *testing.T) {
	var c Cursor
	for _, tc := range cases.Invalid {
		if tc.Hex == "" {
			continue // the top level is a sequence: no values is no error
		}
		c.Reset(cases.Bytes(tc.Hex))
		err := walk(&c, amqpsax.NopHandler{})
		assertFault(t, err, tc.Err, tc.Offset, tc.String())
	}
	for _, tc := range cases.InvalidText {
		c.Validate = false
		c.Reset(cases.Bytes(tc.Hex))
		assert.NoError(t, walk(&c, amqpsax.NopHandler{}), tc.Name)
		c.Validate = true
		c.Reset(cases.Bytes(tc.Hex))
		assertFault(t, walk(&c, amqpsax.NopHandler{}), tc.Err, tc.Offset, tc.Name)
	}
}

func TestTruncation(t *testing.T) {
	var c Cursor
	for _, tc := range cases.Valid {
		full := cases.Bytes(tc.Hex)
		for cut := range len(full) {
			c.Reset(full[:cut:cut])
			err := walk(&c, amqpsax.NopHandler{})
			if cut == 0 {
				assert.NoError(t, err) // an empty sequence of values
				continue
			}
			assertFault(t, err, io.ErrUnexpectedEOF, cases.TruncOffset(full, cut), tc.Name)
		}
	}
}

// TestProtonCorpus: the cursor walks every value, message and
// performative of the Proton corpus to the tree Proton reported.
func TestProtonCorpus(t *testing.T) {
	var c Cursor
	var rec trace.Recorder
	for _, e := range corpus.All(t) {
		rec.Reset()
		c.Reset(e.Data)
		if assert.NoError(t, walk(&c, &rec), e.Name) {
			assert.Equal(t, e.Trace, rec.String(), e.Name)
		}
	}
}

// TestSkipConsumesWhatWalkConsumes: moving past each top-level value
// without entering it lands exactly where a full walk does, for every
// case and every corpus entry.
func TestSkipConsumesWhatWalkConsumes(t *testing.T) {
	var c Cursor
	var all []byte
	var offsets []int
	for _, tc := range cases.Valid {
		offsets = append(offsets, len(all))
		all = append(all, cases.Bytes(tc.Hex)...)
	}
	c.Reset(all)
	var got []int
	for c.Next() {
		got = append(got, c.Offset())
		raw := c.Raw()
		assert.Equal(t, c.Offset()+len(raw), c.cur.end)
	}
	require.NoError(t, c.Err())
	assert.Equal(t, offsets, got)
	for _, e := range corpus.Load(t, "messages.jsonl") {
		c.Reset(e.Data)
		end := 0
		for c.Next() {
			end = c.Offset() + len(c.Raw())
		}
		require.NoError(t, c.Err())
		assert.Equal(t, len(e.Data), end, e.Name)
	}
}

// TestRaw: Raw of every value in a full walk decodes, on its own, to the
// same events as the value (array elements get their constructor back).
func TestRaw(t *testing.T) {
	var c Cursor
	var full, sub trace.Recorder
	var d dispatch.Decoder
	var check func()
	check = func() {
		for c.Next() {
			raw := c.Raw()
			if c.lv.kind == wire.LvArray || (c.lv.kind == wire.LvDescElem && c.lv.left == 0) { // an element's body
				raw = append([]byte{byte(c.Code())}, raw...)
			}
			if c.lv.kind == wire.LvDescArray { // an element of a described array: no standalone encoding
				raw = nil
			}
			if raw != nil {
				sub.Reset()
				_, err := d.Decode(raw, &sub)
				require.NoError(t, err)
				// the value's own trace, from a walk of a copy
				var cc Cursor
				cc.Reset(raw)
				full.Reset()
				require.NoError(t, walk(&cc, &full))
				assert.Equal(t, full.String(), sub.String())
			}
			if c.Kind() >= amqpsax.KindList && c.Enter() {
				check()
				c.Exit()
			}
		}
	}
	for _, tc := range cases.Valid {
		c.Reset(cases.Bytes(tc.Hex))
		check()
		require.NoError(t, c.Err(), tc.Name)
	}
}

func TestWrongKindGetters(t *testing.T) {
	var c Cursor
	c.Reset(cases.Bytes("a10161"))
	require.True(t, c.Next())
	assert.Zero(t, c.Uint())
	assert.ErrorIs(t, c.Err(), amqpsax.ErrWrongKind)
	assert.False(t, c.Next(), "the error is sticky")
	// every getter on every kind: no panic
	for _, tc := range cases.Valid {
		c.Reset(cases.Bytes(tc.Hex))
		c.Next()
		_ = c.Bool()
		c.Reset(cases.Bytes(tc.Hex))
		c.Next()
		c.Uint()
		c.Int()
		c.Float()
		c.Double()
		c.Decimal32()
		c.Decimal64()
		c.Decimal128()
		c.Char()
		c.Timestamp()
		c.UUID()
		c.Bytes()
		c.AppendInts(nil)
		c.Descriptor()
	}
	// getters with no current value
	c.Reset(nil)
	assert.Zero(t, c.Int())
	assert.Nil(t, c.Bytes())
	assert.Nil(t, c.Raw())
	assert.ErrorIs(t, c.Err(), amqpsax.ErrWrongKind)
	c.Reset(cases.Bytes("40"))
	assert.False(t, c.Enter(), "Enter before Next")
	c.Reset(cases.Bytes("40"))
	c.Next()
	assert.False(t, c.Enter(), "Enter on null")
	assert.ErrorIs(t, c.Err(), amqpsax.ErrWrongKind)
	c.Reset(cases.Bytes("40"))
	assert.False(t, c.Exit(), "Exit at top")
}

func TestValidate(t *testing.T) {
	c := Cursor{Validate: true}
	c.Reset(cases.Bytes("c00401a101ff"))
	assertFault(t, walk(&c, amqpsax.NopHandler{}), amqpsax.ErrInvalidUTF8, 3, "utf8")
	c.Reset(cases.Bytes("e00602a3" + "0161" + "0180"))
	assertFault(t, walk(&c, amqpsax.NopHandler{}), amqpsax.ErrInvalidSymbol, 6, "ascii")
	c.Reset(cases.Bytes("a10368c3a9"))
	assert.NoError(t, walk(&c, amqpsax.NopHandler{}))
	// A skipped string is not validated: only what the cursor lands on.
	c.Reset(cases.Bytes("c00401a101ff"))
	require.True(t, c.Next())
	assert.False(t, c.Next())
	assert.NoError(t, c.Err())
}

func TestMaxDepth(t *testing.T) {
	c := Cursor{MaxDepth: 1}
	c.Reset(cases.Bytes("005301" + "005302" + "40"))
	assertFault(t, walk(&c, amqpsax.NopHandler{}), amqpsax.ErrTooDeep, 3, "described")
	c.Reset(cases.Bytes("e00702005373" + "52" + "0102"))
	assertFault(t, walk(&c, amqpsax.NopHandler{}), amqpsax.ErrTooDeep, 7, "array")
}

// A Cursor declared where it is used (as a parser of one frame or one
// section does) walks a few levels deep without allocating.
func TestFreshCursorAllocs(t *testing.T) {
	msg := cases.Bytes("005373c00a03a10161a10162c00100") // described list of list
	allocs := testing.AllocsPerRun(100, func() {
		var c Cursor
		c.Reset(msg)
		for c.Next() && c.Enter() {
			for c.Next() {
				if c.Kind() == amqpsax.KindList {
					c.Enter()
					c.Next()
					c.Exit()
				}
			}
			c.Exit()
		}
		if c.Err() != nil {
			t.Fatal(c.Err())
		}
	})
	require.Zero(t, allocs)
}
