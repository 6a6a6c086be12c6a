package message

import (
	"fmt"
	"time"

	"github.com/amqpsax/amqpsax"
	"github.com/google/uuid"
)

// UlongID is a message-id or correlation-id of type ulong.
func UlongID(n uint64) ID { return ID{Kind: amqpsax.KindUlong, Ulong: n} }

// UUIDID is a message-id or correlation-id of type uuid.
func UUIDID(u uuid.UUID) ID { return ID{Kind: amqpsax.KindUUID, UUID: u} }

// BinaryID is a message-id or correlation-id of type binary; the ID
// shares b.
func BinaryID(b []byte) ID { return ID{Kind: amqpsax.KindBinary, Bytes: b} }

// StringID is a message-id or correlation-id of type string (a copy of s:
// one allocation; build an ID{Kind: amqpsax.KindString, Bytes: b} to
// share bytes instead).
func StringID(s string) ID { return ID{Kind: amqpsax.KindString, Bytes: []byte(s)} }

// IDOf makes an ID from a Go value: uint64 (ulong), uuid.UUID, []byte
// (binary, shared) or string, and nil for no ID (KindNull). Any other
// type is an error wrapping ErrGoType: the spec allows those four.
func IDOf(v any) (ID, error) {
	switch v := v.(type) {
	case nil:
		return ID{Kind: amqpsax.KindNull}, nil
	case uint64:
		return UlongID(v), nil
	case uuid.UUID:
		return UUIDID(v), nil
	case []byte:
		return BinaryID(v), nil
	case string:
		return StringID(v), nil
	}
	return ID{}, fmt.Errorf("message: IDOf: %w: %T (want uint64, uuid.UUID, []byte or string)", ErrGoType, v)
}

// Any returns the ID as a Go value: uint64, uuid.UUID, []byte (a copy) or
// string, and nil when absent — the types IDOf takes.
func (id ID) Any() any {
	switch id.Kind {
	case amqpsax.KindUlong:
		return id.Ulong
	case amqpsax.KindUUID:
		return id.UUID
	case amqpsax.KindBinary:
		return append([]byte{}, id.Bytes...)
	case amqpsax.KindString:
		return string(id.Bytes)
	}
	return nil
}

// Equal reports whether two IDs are the same: the same type and value
// (a string ID is never equal to a binary one of the same bytes). The
// absent kinds (KindNull and the zero ID's KindInvalid) are equal.
func (id ID) Equal(o ID) bool {
	if !hasID(&id) || !hasID(&o) {
		return hasID(&id) == hasID(&o)
	}
	if id.Kind != o.Kind {
		return false
	}
	switch id.Kind {
	case amqpsax.KindUlong:
		return id.Ulong == o.Ulong
	case amqpsax.KindUUID:
		return id.UUID == o.UUID
	}
	return string(id.Bytes) == string(o.Bytes)
}

// Time returns the timestamp ms (milliseconds since the Unix epoch, as
// AMQP timestamps count) as a time.Time in UTC, as stream.Cursor.Any
// returns timestamps.
func Time(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// CreationTimeAt returns the creation-time as a time.Time (UTC), and
// whether it is present.
func (p *Properties) CreationTimeAt() (time.Time, bool) {
	if !p.HasCreationTime {
		return time.Time{}, false
	}
	return Time(p.CreationTime), true
}

// SetCreationTime sets the creation-time to t, in milliseconds since the
// Unix epoch (finer precision is dropped).
func (p *Properties) SetCreationTime(t time.Time) {
	p.CreationTime, p.HasCreationTime = t.UnixMilli(), true
}

// AbsoluteExpiryTimeAt returns the absolute-expiry-time as a time.Time
// (UTC), and whether it is present.
func (p *Properties) AbsoluteExpiryTimeAt() (time.Time, bool) {
	if !p.HasAbsoluteExpiryTime {
		return time.Time{}, false
	}
	return Time(p.AbsoluteExpiryTime), true
}

// SetAbsoluteExpiryTime sets the absolute-expiry-time to t, in
// milliseconds since the Unix epoch.
func (p *Properties) SetAbsoluteExpiryTime(t time.Time) {
	p.AbsoluteExpiryTime, p.HasAbsoluteExpiryTime = t.UnixMilli(), true
}
