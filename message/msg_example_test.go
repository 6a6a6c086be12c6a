package message_test

import (
	"fmt"
	"time"

	"github.com/amqpsax/amqpsax/message"
	"github.com/google/uuid"
)

// A client builds a message: header and properties from their structs,
// application properties from a Go map (written with their keys in byte
// order, so the same map gives the same bytes every time), message
// annotations from typed values, and a data body, all appended into the
// caller's buffer.
func ExampleMessage_Append() {
	var vs message.Values // encodes the values; reuse it with Reset
	props := message.Properties{
		MessageID:   message.UUIDID(uuid.MustParse("0f8fad5b-d9cb-469f-a165-70867728950e")),
		To:          []byte("orders"),
		ContentType: []byte("application/json"),
	}
	props.SetCreationTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	app, err := vs.PropertiesOf(map[string]any{"tenant": "acme", "attempt": int32(2)})
	if err != nil {
		panic(err)
	}
	m := message.Message{
		Header:                &message.Header{Durable: true, Priority: 4},
		MessageAnnotations:    message.EntriesOf(message.Field{Key: vs.Symbol("x-opt-partition-key"), Value: vs.String("eu-7")}),
		Properties:            &props,
		ApplicationProperties: app,
		Body:                  message.Body{Kind: message.BodyData, Data: [][]byte{[]byte(`{"id":1}`)}},
	}
	buf, err := m.Append(make([]byte, 0, 512))
	if err != nil {
		panic(err)
	}
	fmt.Println(len(buf), "bytes")

	var got message.Message
	if err := got.Decode(buf); err != nil {
		panic(err)
	}
	for k, v := range got.ApplicationProperties.All() {
		a, _ := v.Any()
		fmt.Printf("%s = %v (%v)\n", k.Bytes(), a, v.Kind())
	}
	created, _ := got.Properties.CreationTimeAt()
	fmt.Println(got.Properties.MessageID.Any(), created.Format(time.RFC3339))
	// Output:
	// 160 bytes
	// attempt = 2 (int)
	// tenant = acme (string)
	// 0f8fad5b-d9cb-469f-a165-70867728950e 2026-01-01T00:00:00Z
}

// A consumer decodes every delivery into one Message it reuses: Decode
// copies the input into storage the Message keeps (the input buffer may
// be reused at once), and every field is a view into that copy, so once
// the storage has grown to the messages seen nothing is allocated.
func ExampleMessage_Decode() {
	var vs message.Values
	var deliveries [][]byte
	for i, tenant := range []string{"acme", "globex"} {
		vs.Reset()
		m := message.Message{
			Properties:            &message.Properties{MessageID: message.UlongID(uint64(100 + i))},
			ApplicationProperties: message.EntriesOf(message.Field{Key: vs.String("tenant"), Value: vs.String(tenant)}),
			Body:                  message.Body{Kind: message.BodyValue, Value: vs.Long(int64(i * 10))},
		}
		b, err := m.Append(nil)
		if err != nil {
			panic(err)
		}
		deliveries = append(deliveries, b)
	}

	var m message.Message // reused for every delivery
	for _, d := range deliveries {
		if err := m.Decode(d); err != nil {
			fmt.Println("reject:", err)
			continue
		}
		clear(d) // the message keeps its own copy
		fmt.Println(m.Properties.MessageID.Ulong, string(m.ApplicationProperties.Get("tenant").Bytes()), m.Body.Value.Int())
	}
	if err := m.Decode(deliveries[0][:0]); err == nil {
		fmt.Println("empty:", m.Properties == nil, m.Body.Kind)
	}
	// Output:
	// 100 acme 0
	// 101 globex 10
	// empty: true none
}
