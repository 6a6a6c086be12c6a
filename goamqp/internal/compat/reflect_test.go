package compat

import (
	"encoding/hex"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	ours "github.com/amqpsax/amqpsax/goamqp"
)

// ourTypes maps go-amqp's named types (by name: its internal package
// cannot be imported) to ours. Three of them are unexported in ours, as
// go-amqp's are out of reach in its internal package: their types come
// from values our decoder makes.
var ourTypes = func() map[string]reflect.Type {
	m := map[string]reflect.Type{
		"amqp.Message":           reflect.TypeFor[ours.Message](),
		"amqp.MessageHeader":     reflect.TypeFor[ours.MessageHeader](),
		"amqp.MessageProperties": reflect.TypeFor[ours.MessageProperties](),
		"amqp.Null":              reflect.TypeFor[ours.Null](),
		"encoding.Annotations":   reflect.TypeFor[ours.Annotations](),
		"encoding.UUID":          reflect.TypeFor[ours.UUID](),
		"encoding.Symbol":        reflect.TypeFor[ours.Symbol](),
		"encoding.Error":         reflect.TypeFor[ours.Error](),
		"encoding.ErrCond":       reflect.TypeFor[ours.ErrCond](),
		"encoding.StateAccepted": reflect.TypeFor[ours.StateAccepted](),
		"encoding.StateRejected": reflect.TypeFor[ours.StateRejected](),
		"encoding.StateReleased": reflect.TypeFor[ours.StateReleased](),
		"encoding.StateModified": reflect.TypeFor[ours.StateModified](),
		"encoding.StateReceived": reflect.TypeFor[ours.StateReceived](),
	}
	for name, h := range map[string]string{
		"encoding.DescribedType":  "00a30178a100",
		"encoding.ArrayUByte":     "e0030150ff",
		"encoding.LifetimePolicy": "00532b45",
	} {
		b, _ := hex.DecodeString("005377" + h)
		var msg ours.Message
		if err := msg.UnmarshalBinary(b); err != nil {
			panic(err)
		}
		m[name] = reflect.TypeOf(msg.Value)
	}
	return m
}()

// conv returns go-amqp's value v rebuilt with our types, everything else
// (Go's own types) as it is.
func conv(v any) any {
	if v == nil {
		return nil
	}
	return convValue(reflect.ValueOf(v)).Interface()
}

func convType(t reflect.Type) reflect.Type {
	if o, ok := ourTypes[t.String()]; ok && t.PkgPath() != o.PkgPath() {
		return o
	}
	switch t.Kind() {
	case reflect.Pointer:
		return reflect.PointerTo(convType(t.Elem()))
	case reflect.Slice:
		return reflect.SliceOf(convType(t.Elem()))
	case reflect.Map:
		return reflect.MapOf(convType(t.Key()), convType(t.Elem()))
	}
	return t
}

func convValue(v reflect.Value) reflect.Value {
	t := convType(v.Type())
	out := reflect.New(t).Elem()
	switch v.Kind() {
	case reflect.Interface:
		if v.IsNil() {
			return out
		}
		out.Set(convValue(v.Elem()))
	case reflect.Pointer:
		if v.IsNil() {
			return out
		}
		p := reflect.New(t.Elem())
		p.Elem().Set(convValue(v.Elem()))
		out.Set(p)
	case reflect.Slice:
		if v.IsNil() {
			return out
		}
		s := reflect.MakeSlice(t, v.Len(), v.Len())
		for i := range v.Len() {
			s.Index(i).Set(convValue(v.Index(i)))
		}
		out.Set(s)
	case reflect.Map:
		if v.IsNil() {
			return out
		}
		m := reflect.MakeMapWithSize(t, v.Len())
		for it := v.MapRange(); it.Next(); {
			m.SetMapIndex(convValue(it.Key()), convValue(it.Value()))
		}
		out.Set(m)
	case reflect.Struct:
		if t == reflect.TypeFor[time.Time]() {
			out.Set(v)
			break
		}
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			out.FieldByName(f.Name).Set(convValue(v.Field(i)))
		}
	default:
		out.Set(v.Convert(t))
	}
	return out
}

// dump writes v as text that names types without their package path, so
// that go-amqp's values and ours compare as strings: maps in key order,
// pointers followed, times as instants with their zone, NaN as NaN.
func dump(v any) string {
	var b strings.Builder
	dumpValue(&b, reflect.ValueOf(v))
	return b.String()
}

func dumpValue(b *strings.Builder, v reflect.Value) {
	if !v.IsValid() {
		b.WriteString("nil")
		return
	}
	t := v.Type()
	switch v.Kind() {
	case reflect.Interface:
		dumpValue(b, v.Elem())
		return
	case reflect.Pointer:
		if v.IsNil() {
			fmt.Fprintf(b, "(%s)nil", typeName(t))
			return
		}
		b.WriteString("&")
		dumpValue(b, v.Elem())
		return
	}
	fmt.Fprintf(b, "%s", typeName(t))
	switch v.Kind() {
	case reflect.Slice:
		if v.IsNil() {
			b.WriteString("(nil)")
			return
		}
		b.WriteString("[")
		for i := range v.Len() {
			dumpValue(b, v.Index(i))
			b.WriteString(",")
		}
		b.WriteString("]")
	case reflect.Map:
		if v.IsNil() {
			b.WriteString("(nil)")
			return
		}
		var kv []string
		for it := v.MapRange(); it.Next(); {
			var e strings.Builder
			dumpValue(&e, it.Key())
			e.WriteString(":")
			dumpValue(&e, it.Value())
			kv = append(kv, e.String())
		}
		slices.Sort(kv)
		fmt.Fprintf(b, "{%s}", strings.Join(kv, ","))
	case reflect.Struct:
		if t == reflect.TypeFor[time.Time]() {
			tm := v.Interface().(time.Time)
			fmt.Fprintf(b, "(%d.%09d %s)", tm.Unix(), tm.Nanosecond(), tm.Location())
			return
		}
		b.WriteString("{")
		for i := range v.NumField() {
			if !t.Field(i).IsExported() {
				continue
			}
			fmt.Fprintf(b, "%s:", t.Field(i).Name)
			dumpValue(b, v.Field(i))
			b.WriteString(",")
		}
		b.WriteString("}")
	case reflect.Float32, reflect.Float64:
		fmt.Fprintf(b, "(%x)", math.Float64bits(v.Float()))
	default:
		fmt.Fprintf(b, "(%v)", v.Interface())
	}
}

var exported = regexp.MustCompile(`\b(?:amqp|encoding)\.(\w)`)

// typeName is t's name with go-amqp's package names and ours made one,
// and the case of the name's first letter left out (our three
// unexported types are go-amqp's exported ones of its internal package).
func typeName(t reflect.Type) string {
	return exported.ReplaceAllStringFunc(t.String(), func(s string) string {
		return "amqp." + strings.ToLower(s[len(s)-1:])
	})
}
