package stream

import (
	"errors"
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/dispatch"
	"github.com/amqpsax/amqpsax/internal/cases"
	"github.com/amqpsax/amqpsax/internal/trace"
)

// FuzzCursor is the differential target: for any input, a full cursor
// walk and dispatch.DecodeAll report the same events and the same error at
// the same offset (with and without validation); Raw of every top-level
// value re-decodes to that value; and moving past values without entering
// them consumes exactly the bytes the full walk consumed.
func FuzzCursor(f *testing.F) {
	for _, tc := range cases.Valid {
		f.Add(cases.Bytes(tc.Hex))
	}
	for _, tc := range append(cases.Invalid, cases.InvalidText...) {
		f.Add(cases.Bytes(tc.Hex))
	}
	var c Cursor
	var d dispatch.Decoder
	var rc, rd, rv trace.Recorder
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, validate := range []bool{false, true} {
			c.Validate, d.Validate = validate, validate
			rc.Reset()
			rd.Reset()
			c.Reset(data)
			errC := walk(&c, &rc)
			errD := d.DecodeAll(data, &rd)
			if rc.String() != rd.String() {
				t.Fatalf("validate=%v events differ:\ncursor   %s\ndispatch %s", validate, rc.String(), rd.String())
			}
			if !sameFault(errC, errD) {
				t.Fatalf("validate=%v errors differ: cursor %v, dispatch %v", validate, errC, errD)
			}
			if errC != nil {
				continue
			}
			// Skipping: each top-level value's Raw ends where the next
			// begins, and the last ends at the end of the data.
			c.Reset(data)
			end := 0
			for c.Next() {
				if c.Offset() != end {
					t.Fatalf("value at %d, previous ended at %d", c.Offset(), end)
				}
				raw := c.Raw()
				end += len(raw)
				rv.Reset()
				if _, err := d.Decode(raw, &rv); err != nil {
					t.Fatalf("Raw %x does not decode: %v", raw, err)
				}
				var one Cursor
				one.Validate = validate
				one.Reset(raw)
				rc.Reset()
				if err := walk(&one, &rc); err != nil || rc.String() != rv.String() {
					t.Fatalf("Raw %x: %v %q vs %q", raw, err, rc.String(), rv.String())
				}
			}
			if c.Err() != nil || end != len(data) {
				t.Fatalf("skip walk: %v, ended at %d of %d", c.Err(), end, len(data))
			}
		}
		// ParseValue agrees with a one-value decode, and a Value's
		// getters and Any never panic.
		rd.Reset()
		d.Validate = false // as ParseValue: text unchecked
		n, errD := d.Decode(data, &rd)
		v, errP := ParseValue(data)
		switch {
		case errD == nil && n == len(data):
			if errP != nil {
				t.Fatalf("ParseValue: %v; dispatch decodes %x", errP, data)
			}
			_, _, _, _ = v.Bool(), v.Uint(), v.Int(), v.Bytes()
			_, _, _ = v.Timestamp(), v.UUID(), v.Decimal128()
			if _, err := v.Any(); err != nil && !errors.Is(err, ErrMapKey) && !errors.Is(err, ErrAnyLimit) {
				t.Fatalf("Any on %x: %v", data, err)
			}
		case errP == nil:
			t.Fatalf("ParseValue accepts %x; dispatch: %v, %d of %d bytes", data, errD, n, len(data))
		}
	})
}

// sameFault reports whether two decoder errors are both nil, or the same
// cause at the same offset.
func sameFault(a, b error) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var ea, eb *amqpsax.Error
	if !errors.As(a, &ea) || !errors.As(b, &eb) {
		return false
	}
	return ea.Offset == eb.Offset && ea.Err == eb.Err
}
