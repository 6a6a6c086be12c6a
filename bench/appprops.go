package bench

import (
	"fmt"
	"reflect"

	amqp "github.com/Azure/go-amqp"
	"github.com/amqpsax/amqpsax/message"
)

// AppProps turns a message's application properties into a Go map of
// plain values: what a user who wants Go values does. go-amqp decodes
// the whole message to get there (it has no other way); amqpsax scans the
// sections and converts the one.
const AppProps = "AppProps"

func init() {
	Impls = append(Impls,
		Impl{Task: AppProps, Name: "goamqp", Only: hasAppProps, New: appPropsGoAMQP},
		Impl{Task: AppProps, Name: "message-map", Only: hasAppProps, New: appPropsMessage},
	)
}

// hasAppProps: the small and medium workloads, whose application
// properties are the point of the message (the others add a large body,
// which go-amqp decodes and amqpsax skips, and nothing else).
func hasAppProps(w *Workload) bool { return w.Name == "small" || w.Name == "medium" }

func appPropsGoAMQP(w *Workload) Op {
	var got map[string]any
	return Op{
		Run: func() error {
			var m amqp.Message
			if err := m.UnmarshalBinary(w.AMQP); err != nil {
				return err
			}
			got = m.ApplicationProperties
			return nil
		},
		Check: func() error { return sameProps(w, got) },
	}
}

func appPropsMessage(w *Workload) Op {
	var got map[string]any
	return Op{
		Run: func() error {
			s, err := message.Scan(w.AMQP)
			if err != nil {
				return err
			}
			got, err = message.AnyMap(s.ApplicationProperties)
			return err
		},
		Check: func() error { return sameProps(w, got) },
	}
}

// sameProps checks a map of application properties against the
// workload's model: the same keys, and values equal once both sides'
// named types (go-amqp's, ours) are set aside.
func sameProps(w *Workload, got map[string]any) error {
	var want Map
	for _, d := range w.Model {
		if d.Descriptor == uint64(descAppProps) {
			want = d.Value.(Map)
		}
	}
	if len(got) != len(want) || len(want) == 0 {
		return fmt.Errorf("%d properties, want %d", len(got), len(want))
	}
	for _, kv := range want {
		k := fmt.Sprint(kv.Key)
		v, ok := got[k]
		if !ok {
			return fmt.Errorf("no property %q", k)
		}
		if !sameScalar(v, kv.Value) {
			return fmt.Errorf("property %q: %v (%T), want %v (%T)", k, v, v, kv.Value, kv.Value)
		}
	}
	return nil
}

// sameScalar compares two scalars of possibly different named types by
// their kind and value (a Timestamp against a time.Time by milliseconds).
func sameScalar(a, b any) bool {
	if ts, ok := b.(Timestamp); ok {
		type millis interface{ UnixMilli() int64 }
		m, ok := a.(millis)
		return ok && m.UnixMilli() == int64(ts)
	}
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	if va.Kind() != vb.Kind() {
		return false
	}
	if va.Kind() == reflect.String {
		return va.String() == vb.String()
	}
	return reflect.DeepEqual(a, b) || va.CanConvert(vb.Type()) && reflect.DeepEqual(va.Convert(vb.Type()).Interface(), b)
}
