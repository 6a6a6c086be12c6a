package client

import (
	"testing"

	"github.com/amqpsax/amqpsax/frame"
)

// The stage tap reads the peer's first bytes, whatever they are: it
// must never panic, and must name the stage a well-formed exchange has
// reached however the bytes are split.
func FuzzTap(f *testing.F) {
	saslHdr := frame.AppendProtocolHeader(nil, frame.HeaderSASL)
	mechs := frame.AppendSASLMechanisms(frame.BeginFrame(nil, frame.TypeSASL, 0), frame.SASLMechanisms{Mechanisms: []byte{0xa3, 9, 'A', 'N', 'O', 'N', 'Y', 'M', 'O', 'U', 'S'}})
	mechs = frame.EndFrame(mechs, 0)
	outcome := frame.EndFrame(frame.AppendSASLOutcome(frame.BeginFrame(nil, frame.TypeSASL, 0), frame.SASLOutcome{Code: frame.SASLOk}), 0)
	f.Add(append(append(append([]byte{}, saslHdr...), mechs...), outcome...), uint8(3))
	f.Add([]byte("HTTP/1.1 400 Bad Request\r\n\r\n"), uint8(1))
	f.Add([]byte("AMQP\x00\x01\x00\x00"), uint8(0))
	f.Add([]byte("AMQP\x03\x01\x00\x00\xff\xff\xff\xff\x02\x01\x00\x00"), uint8(2))
	f.Fuzz(func(t *testing.T, p []byte, split uint8) {
		var tp tapConn
		tp.tracking.Store(true)
		step := int(split%16) + 1
		for len(p) > 0 {
			k := min(step, len(p))
			if tp.tracking.Load() {
				tp.follow(p[:k])
			}
			p = p[k:]
		}
		_ = tp.stage()
	})
}

func TestTapStages(t *testing.T) {
	saslHdr := frame.AppendProtocolHeader(nil, frame.HeaderSASL)
	mechs := frame.EndFrame(frame.AppendSASLMechanisms(frame.BeginFrame(nil, frame.TypeSASL, 0), frame.SASLMechanisms{Mechanisms: []byte{0xa3, 9, 'A', 'N', 'O', 'N', 'Y', 'M', 'O', 'U', 'S'}}), 0)
	outcome := frame.EndFrame(frame.AppendSASLOutcome(frame.BeginFrame(nil, frame.TypeSASL, 0), frame.SASLOutcome{Code: frame.SASLOk}), 0)
	prefix := append(append([]byte{}, saslHdr...), mechs...)
	feed := func(tp *tapConn, p []byte, step int) {
		for len(p) > 0 {
			k := min(step, len(p))
			tp.follow(p[:k])
			p = p[k:]
		}
	}
	for step := 1; step <= len(prefix)+len(outcome); step++ {
		var tp tapConn
		tp.tracking.Store(true)
		feed(&tp, saslHdr[:7], step)
		if got := tp.stage(); got != "header" {
			t.Fatalf("split by %d: within the protocol header, stage %s", step, got)
		}
		feed(&tp, saslHdr[7:], step)
		if got := tp.stage(); got != "sasl" {
			t.Fatalf("split by %d: after the SASL header, stage %s", step, got)
		}
		feed(&tp, mechs, step)
		if got := tp.stage(); got != "sasl" {
			t.Fatalf("split by %d: after sasl-mechanisms, stage %s", step, got)
		}
		feed(&tp, outcome, step)
		if got := tp.stage(); got != "open" {
			t.Fatalf("split by %d: after sasl-outcome, stage %s", step, got)
		}
	}
}
