package frame

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/dispatch"
	"github.com/amqpsax/amqpsax/internal/trace"
	"github.com/amqpsax/amqpsax/stream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// literalOf returns a new zero Go value for the composite type with
// descriptor d (a pointer to it), as a struct literal would start.
func literalOf(d amqpsax.Descriptor) reflect.Value {
	for name, gd := range goTypes {
		if gd == d {
			return reflect.New(reflect.TypeOf(literalTypes[name]))
		}
	}
	v := reflect.New(reflect.TypeOf(DeliveryState{}))
	st := map[amqpsax.Descriptor]StateType{amqpsax.DescriptorReceived: StateReceived, amqpsax.DescriptorAccepted: StateAccepted,
		amqpsax.DescriptorRejected: StateRejected, amqpsax.DescriptorReleased: StateReleased, amqpsax.DescriptorModified: StateModified}
	if t, ok := st[d]; ok {
		v.Elem().FieldByName("Type").Set(reflect.ValueOf(t))
		return v
	}
	v = reflect.New(reflect.TypeOf(Target{}))
	v.Elem().FieldByName("Coordinator").SetBool(d == amqpsax.DescriptorCoordinator)
	return v
}

var literalTypes = map[string]any{
	"Open": Open{}, "Begin": Begin{}, "Attach": Attach{}, "Flow": Flow{}, "Transfer": Transfer{},
	"Disposition": Disposition{}, "Detach": Detach{}, "End": End{}, "Close": Close{}, "AMQPError": AMQPError{},
	"SASLMechanisms": SASLMechanisms{}, "SASLInit": SASLInit{}, "SASLChallenge": SASLChallenge{},
	"SASLResponse": SASLResponse{}, "SASLOutcome": SASLOutcome{}, "Source": Source{}, "Target": Target{},
	"Declare": Declare{}, "Discharge": Discharge{}, "Declared": Declared{}, "TransactionalState": TransactionalState{},
}

// appendLiteral writes v (a pointer to a composite) with its Append
// function.
func appendLiteral(v reflect.Value) []byte {
	switch x := v.Interface().(type) {
	case *Open:
		return AppendOpen(nil, *x)
	case *Begin:
		return AppendBegin(nil, *x)
	case *Attach:
		return AppendAttach(nil, *x)
	case *Flow:
		return AppendFlow(nil, *x)
	case *Transfer:
		return AppendTransfer(nil, *x)
	case *Disposition:
		return AppendDisposition(nil, *x)
	case *Detach:
		return AppendDetach(nil, *x)
	case *End:
		return AppendEnd(nil, *x)
	case *Close:
		return AppendClose(nil, *x)
	case *SASLMechanisms:
		return AppendSASLMechanisms(nil, *x)
	case *SASLInit:
		return AppendSASLInit(nil, *x)
	case *SASLChallenge:
		return AppendSASLChallenge(nil, *x)
	case *SASLResponse:
		return AppendSASLResponse(nil, *x)
	case *SASLOutcome:
		return AppendSASLOutcome(nil, *x)
	case *AMQPError:
		return appendError(nil, x)
	case *Source:
		return appendSource(nil, x)
	case *Target:
		return appendTarget(nil, x)
	case *DeliveryState:
		return appendState(nil, x)
	case *Declare:
		return AppendDeclare(nil, *x)
	case *Discharge:
		return AppendDischarge(nil, *x)
	case *Declared:
		return AppendDeclared(nil, *x)
	case *TransactionalState:
		return AppendTransactionalState(nil, *x)
	}
	panic("no Append for " + v.Type().String())
}

// literalValue returns a value for a field of Go type typ: its zero
// value ("zero"), the spec's default def ("default"), or another one
// ("other"); ok false when there is no such value for the type.
func literalValue(t *testing.T, typ reflect.Type, f specField, which string) (v reflect.Value, ok bool) {
	inner, isOpt := typ, strings.HasPrefix(typ.Name(), "Opt[")
	if isOpt {
		inner = typ.Method(0).Type.Out(0) // Get's first result
	}
	x := reflect.New(inner).Elem()
	switch which {
	case "zero":
	case "default":
		if f.Default == "" {
			return v, false
		}
		def := f.Default
		if ft := lookupSpecType(f.Type); ft != nil {
			for _, c := range ft.Choices {
				if c.Name == def {
					def = c.Value
				}
			}
		}
		switch inner.Kind() {
		case reflect.Bool:
			x.SetBool(def == "true")
		case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			if inner == reflect.TypeOf(ExpiryPolicy(0)) {
				p, ok := lookupExpiry([]byte(def))
				require.True(t, ok, def)
				x.Set(reflect.ValueOf(p))
				break
			}
			n, err := strconv.ParseUint(def, 10, 64)
			require.NoError(t, err, f.Name)
			x.SetUint(n)
		default:
			t.Fatalf("%s: a default %q for %s", f.Name, def, inner)
		}
	case "other":
		switch y := x.Addr().Interface().(type) {
		case *[]byte:
			*y = []byte("x")
		case *Map:
			*y = Map(sampleValue(t, f))
		case *Symbols:
			*y = Symbols(AppendSymbols(nil, "a", "b"))
		case *ExpiryPolicy:
			*y = ExpiryNever
		case *DeliveryState:
			*y = DeliveryState{Type: StateAccepted}
		case *AMQPError:
			*y = AMQPError{Condition: []byte("x")}
		case *Source, *Target:
			if !isOpt {
				return v, false
			}
		default:
			switch inner.Kind() {
			case reflect.Bool:
				x.SetBool(true)
			case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
				x.SetUint(1)
			default:
				return v, false
			}
		}
	}
	if !isOpt {
		return x, true
	}
	o := reflect.New(typ).Elem()
	reflect.NewAt(o.Field(0).Type(), o.Field(0).Addr().UnsafePointer()).Elem().Set(x)
	reflect.NewAt(o.Field(1).Type(), o.Field(1).Addr().UnsafePointer()).Elem().SetBool(true)
	return o, true
}

// TestAppendLiteral: for every field of every
// performative, SASL frame, source, target, error and delivery state, a
// struct literal with that field at its zero value, at the spec's
// default, and at another value (the mandatory fields zero). The bytes
// its Append function writes must be a well-formed value (dispatch), and
// hold in that field exactly what the literal says (a stream.Cursor):
//
//   - a present Opt, zero and default included, on the wire with its value;
//   - a plain field (a zero value that is the spec's default, or absence)
//     not on the wire at its zero value, and on the wire otherwise;
//   - a mandatory field always, zero included.
//
// and parse back to the literal's value.
func TestAppendLiteral(t *testing.T) {
	rows := 0
	for _, st := range decodedSpecs(t) {
		d := amqpsax.Descriptor(st.Descriptor)
		for i, f := range st.Fields {
			if st.Name == "declare" && f.Name == "global-id" {
				continue // refused whatever it holds (TestDeclareGlobalID)
			}
			for _, which := range []string{"zero", "default", "other"} {
				lit := literalOf(d)
				gf := lit.Elem().FieldByName(goName(f.Name))
				require.True(t, gf.IsValid(), "%s.%s", st.Name, f.Name)
				val, ok := literalValue(t, gf.Type(), f, which)
				if !ok {
					continue
				}
				isOpt := strings.HasPrefix(gf.Type().Name(), "Opt[")
				if !isOpt && !f.Mandatory && f.Default != "" && which == "zero" {
					// A plain field's zero value is its default: the
					// reason it is not an Opt.
					dv, ok := literalValue(t, gf.Type(), f, "default")
					require.True(t, ok)
					require.True(t, dv.IsZero(), "%s.%s: default %q is not the zero value", st.Name, f.Name, f.Default)
				}
				gf.Set(val)
				rows++
				name := st.Name + "." + f.Name + "=" + which
				b := appendLiteral(lit)

				var rec trace.Recorder
				n, err := dispatch.Decode(b, &rec)
				require.NoError(t, err, name)
				require.Equal(t, len(b), n, name)

				var c stream.Cursor
				c.Reset(b)
				require.True(t, c.Next() && c.EnterValue() && c.Enter(), name)
				onWire := c.Seek(i) && !c.IsNull()
				want := f.Mandatory || isOpt || !val.IsZero()
				if which == "default" && !isOpt && !f.Mandatory {
					want = false // the default of a plain field is its zero value
				}
				assert.Equal(t, want, onWire, "%s: %x", name, b)
				if onWire && val.Kind() != reflect.Struct && !isOpt {
					assertWire(t, &c, val, name)
				}
				if onWire && isOpt {
					inner := val.MethodByName("Get").Call(nil)[0]
					if inner.Kind() != reflect.Struct {
						assertWire(t, &c, inner, name)
					}
				}
				require.NoError(t, c.Err(), name)

				back, enc, err := parseComposite(d, b)
				require.NoError(t, err, name)
				assert.Equal(t, b, enc, "%s read back and written again", name)
				got := back.FieldByName(goName(f.Name))
				switch {
				case val.Type() == reflect.TypeOf([]byte(nil)):
					assert.Equal(t, string(val.Bytes()), string(got.Bytes()), "%s read back", name)
				case val.Type() == reflect.TypeOf(Symbols(nil)):
					assert.Equal(t, symbolStrings(val.Interface().(Symbols)), symbolStrings(got.Interface().(Symbols)), "%s read back", name)
				case val.Kind() != reflect.Struct || isOpt && val.MethodByName("Get").Call(nil)[0].Kind() != reflect.Struct:
					assert.Equal(t, val.Interface(), got.Interface(), "%s read back", name)
				}
			}
		}
	}
	t.Logf("%d literals", rows)
	require.Greater(t, rows, 200)
}

// assertWire checks that the value the cursor is on is v.
func assertWire(t *testing.T, c *stream.Cursor, v reflect.Value, name string) {
	switch x := v.Interface().(type) {
	case []byte:
		assert.Equal(t, string(x), string(c.Bytes()), name)
	case Map:
		assert.Equal(t, []byte(x), c.Raw(), name)
	case Symbols:
		assert.Equal(t, symbolStrings(x), symbolStrings(Symbols(c.Raw())), name)
	case ExpiryPolicy:
		assert.Equal(t, x.String(), string(c.Bytes()), name)
	default:
		switch v.Kind() {
		case reflect.Bool:
			assert.Equal(t, v.Bool(), c.Bool(), name)
		case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			assert.Equal(t, v.Uint(), c.Uint(), name)
		default:
			t.Fatalf("%s: no check for %s", name, v.Type())
		}
	}
}

func symbolStrings(s Symbols) []string {
	out := []string{}
	for sym := range s.All() {
		out = append(out, string(sym))
	}
	return out
}
