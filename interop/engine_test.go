package interop

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/message"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The engine tests run real clients against a broker built on package
// engine — examples/broker, built from the main module and started on a
// free loopback port — each case through cmd/amqpspy, which must report
// no fault, and check the recorded bytes: every message a broker
// delivered is byte for byte one a client sent (bare message), every one
// sent was delivered, and no frame is larger than the max-frame-size its
// receiver announced.
//
//	go test -v -run 'TestEngine' .            (in interop/)
//
// AMQPSAX_ENGINE_TARGET=rabbitmq runs the same clients against the broker
// of AMQPSAX_BROKER instead (RabbitMQ 3.10 from .ci/broker): that checks
// the harness itself, and shows where RabbitMQ differs.

// engineTarget is the broker the engine tests run against.
type engineTarget struct {
	name   string
	addr   string // the broker itself; each case puts an amqpspy in front
	rabbit bool
	// user and pass are a SASL PLAIN account the broker knows.
	user, pass string
	// prefix goes before queue names (RabbitMQ 3.10: /queue/).
	prefix string
	// refused is a source address the broker refuses a receiving link
	// with a detach carrying an error.
	refused string
	// idle is the idle-time-out the broker announces (0: none).
	idle time.Duration
}

func (tg *engineTarget) queue(name string) string { return tg.prefix + name }

// The account examples/broker is started with, for SASL PLAIN.
const (
	brokerUser = "amqpsax"
	brokerPass = "interop-secret"
	// brokerIdle is the idle-time-out examples/broker is started with:
	// clients must keep the connection alive with heartbeats.
	brokerIdle = 2 * time.Second
)

// brokerArgs are examples/broker's arguments: listen on addr, one
// account for SASL PLAIN, an idle-time-out.
func brokerArgs(addr string) []string {
	return []string{"-listen", addr, "-user", brokerUser, "-password", brokerPass, "-idle", brokerIdle.String()}
}

// refusedAddress is a source examples/broker refuses a receiver: it has
// no dynamic nodes, and detaches a link without an address with
// amqp:invalid-field. (A sender without an address is an anonymous-relay
// producer, and accepted: refusedBothWays is refused either way.)
const refusedAddress = ""

// refusedBothWays is an address examples/broker refuses a receiver and a
// sender: not UTF-8, which an AMQP string must be (amqp:invalid-field).
// Package client sends it as it is; go-amqp refuses to encode it.
const refusedBothWays = "q\xff"

var runID = fmt.Sprintf("%x", time.Now().UnixNano()&0xffffffff)

// engineTargetFor returns the broker to run against: examples/broker,
// started for the test, or RabbitMQ with AMQPSAX_ENGINE_TARGET=rabbitmq.
func engineTargetFor(t *testing.T) *engineTarget {
	t.Helper()
	if os.Getenv("AMQPSAX_ENGINE_TARGET") == "rabbitmq" {
		addr := os.Getenv("AMQPSAX_BROKER")
		if addr == "" {
			skip(t, "AMQPSAX_ENGINE_TARGET=rabbitmq needs AMQPSAX_BROKER (start one with `.ci/broker start`)")
		}
		return &engineTarget{name: "rabbitmq", addr: addr, rabbit: true, user: "guest", pass: "guest",
			prefix: "/queue/", refused: "/exchange/amqpsax-no-such-exchange-" + runID}
	}
	return &engineTarget{name: "examples/broker", addr: startExampleBroker(t), user: brokerUser, pass: brokerPass,
		refused: refusedAddress, idle: brokerIdle}
}

var (
	brokerBuild    sync.Once
	brokerBinary   string
	brokerBuildErr error
)

// buildExampleBroker builds examples/broker of the main module once.
func buildExampleBroker() (string, error) {
	brokerBuild.Do(func() {
		if _, err := os.Stat(filepath.Join("..", "examples", "broker")); err != nil {
			brokerBuildErr = fmt.Errorf("there is no examples/broker in this tree: %v", err)
			return
		}
		dir, err := os.MkdirTemp("", "amqpsax-broker")
		if err != nil {
			brokerBuildErr = err
			return
		}
		brokerBinary = filepath.Join(dir, "broker")
		cmd := exec.Command("go", "build", "-o", brokerBinary, "./examples/broker")
		cmd.Dir = ".."
		if out, err := cmd.CombinedOutput(); err != nil {
			brokerBuildErr = fmt.Errorf("building examples/broker: %v\n%s", err, out)
		}
	})
	return brokerBinary, brokerBuildErr
}

// TestMain removes what the tests built (examples/broker) when they end.
func TestMain(m *testing.M) {
	code := m.Run()
	if brokerBinary != "" {
		os.RemoveAll(filepath.Dir(brokerBinary))
	}
	os.Exit(code)
}

// freeAddr returns a loopback address no one listens on (a port the
// kernel just handed out).
func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// startExampleBroker starts examples/broker on a free loopback port for
// the test's lifetime and returns its address.
func startExampleBroker(t *testing.T) string {
	t.Helper()
	bin, err := buildExampleBroker()
	if err != nil {
		skip(t, "%v", err)
	}
	addr := freeAddr(t)
	var out bytes.Buffer
	cmd := exec.Command(bin, brokerArgs(addr)...)
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		// A graceful shutdown: SIGINT, and the broker exits by itself
		// (Server.Shutdown) once its connections have closed.
		cmd.Process.Signal(os.Interrupt)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("examples/broker exited with %v after SIGINT", err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("examples/broker did not exit within 10 s of SIGINT")
			cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("examples/broker said:\n%s", out.String())
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return addr
		}
		select {
		case err := <-exited:
			t.Fatalf("examples/broker exited before listening on %s: %v\n%s", addr, err, out.String())
		default:
		}
		require.True(t, time.Now().Before(deadline), "examples/broker did not listen on %s within 20 s", addr)
		time.Sleep(50 * time.Millisecond)
	}
}

// spied is one case's amqpspy in front of the target.
type spied struct {
	t    *testing.T
	tap  Tap
	Addr string
}

func spyOn(t *testing.T, upstream string) *spied {
	t.Helper()
	tap, err := NewSpyTap(upstream, nil)
	require.NoError(t, err)
	return &spied{t: t, tap: tap, Addr: tap.Addr()}
}

// engineCheck says what a case's recorded connections must show.
type engineCheck struct {
	// messages: the case sends and receives messages, each delivered
	// once (redelivered counts more), byte for byte as sent.
	messages bool
	// redelivered is how many deliveries may repeat a message delivered
	// before (released and sent again).
	redelivered int
	// rabbit allows RabbitMQ 3.10's rewrite of a data section of 255
	// bytes (see rabbitBare).
	rabbit bool
	// heartbeats is the least number of empty frames the broker must
	// have sent on some connection; clientHeartbeats the client.
	heartbeats, clientHeartbeats int
}

// finish stops amqpspy, asserts it reported no fault, and checks the
// recorded connections.
func (s *spied) finish(want engineCheck) []*recorded {
	t := s.t
	t.Helper()
	require.NoError(t, s.tap.Close())
	spy := s.tap.(*SpyTap)
	faults, frames, err := spy.Faults()
	require.NoError(t, err)
	assert.Empty(t, faults, "amqpspy reported faults")
	assert.Positive(t, frames)
	conns := spy.Conns()
	require.NotEmpty(t, conns, "amqpspy recorded no connection")
	recs := make([]*recorded, 0, len(conns))
	for i, c := range conns {
		r, err := record(c)
		require.NoError(t, err, "connection %d", i+1)
		recs = append(recs, r)
	}
	sum := checkEngineConns(t, recs, want)
	t.Logf("amqpspy: %d frames, no faults; %s", frames, sum)
	return recs
}

// recorded is one connection as amqpspy recorded it, split.
type recorded struct {
	client, server *Stream
	raw            Conn
	// maxFrame[0] is what the client announced in its open (0: none),
	// maxFrame[1] the broker's.
	maxFrame [2]uint32
}

func record(c Conn) (*recorded, error) {
	cs, err := Split(c.Client)
	if err != nil {
		return nil, fmt.Errorf("client to broker: %w", err)
	}
	ss, err := Split(c.Server)
	if err != nil {
		return nil, fmt.Errorf("broker to client: %w", err)
	}
	r := &recorded{client: cs, server: ss, raw: c}
	for i, s := range []*Stream{cs, ss} {
		for _, f := range s.Frames {
			if f.Performative == amqpsax.DescriptorOpen {
				// max-frame-size, the open's third field.
				if v, ok := field(f.fields, 2); ok {
					r.maxFrame[i] = uint32(v.u)
				}
			}
		}
	}
	return r, nil
}

// checkEngineConns checks the recorded connections against want and
// returns a summary.
func checkEngineConns(t *testing.T, recs []*recorded, want engineCheck) string {
	t.Helper()
	sent := map[string]int{}
	nSent, nDelivered, heartbeats, maxHeartbeats := 0, 0, 0, 0
	clientHeartbeats, maxClientHeartbeats := 0, 0
	for i, r := range recs {
		for _, dl := range r.client.Deliveries {
			sent[string(bareMessage(dl.Data))]++
			nSent++
		}
		hb, chb := emptyFrames(r.server), emptyFrames(r.client)
		heartbeats += hb
		clientHeartbeats += chb
		maxHeartbeats = max(maxHeartbeats, hb)
		maxClientHeartbeats = max(maxClientHeartbeats, chb)
		// Each side kept to the max-frame-size the other announced.
		for side, s := range []*Stream{r.client, r.server} {
			limit := r.maxFrame[1-side]
			if limit == 0 {
				continue
			}
			raw := [2][]byte{r.raw.Client, r.raw.Server}[side]
			for _, f := range s.Frames {
				if size := int(binary.BigEndian.Uint32(raw[f.Offset:])); size > int(limit) {
					t.Errorf("connection %d: a %d-byte frame at %d from the %s, over the %d bytes the other side announced",
						i+1, size, f.Offset, [2]string{"client", "broker"}[side], limit)
				}
			}
		}
	}
	delivered := map[string]int{}
	unmatched, rewritten := 0, 0
	for _, r := range recs {
		for _, dl := range r.server.Deliveries {
			nDelivered++
			key := string(bareMessage(dl.Data))
			if want.rabbit && sent[key] == 0 {
				if k := string(rabbitBare(bareMessage(dl.Data))); sent[k] > 0 {
					key = k
					rewritten++
				}
			}
			delivered[key]++
			if sent[key] == 0 {
				unmatched++
				if unmatched <= 3 {
					t.Errorf("delivered a message no client sent (%d bytes): %.64x…", len(dl.Data), dl.Data)
				}
			}
		}
	}
	notDelivered, repeats := 0, 0
	for k, n := range sent {
		if d := delivered[k]; d < n {
			notDelivered += n - d
		} else {
			repeats += d - n
		}
	}
	if want.messages {
		assert.Positive(t, nSent, "no message was sent")
		assert.Zero(t, unmatched, "delivered messages that match no sent message byte for byte")
		assert.Zero(t, notDelivered, "sent messages that were never delivered")
		assert.LessOrEqual(t, repeats, want.redelivered, "messages delivered more often than sent")
	}
	if want.heartbeats > 0 {
		assert.GreaterOrEqual(t, maxHeartbeats, want.heartbeats, "empty frames (heartbeats) from the broker on one connection")
	}
	if want.clientHeartbeats > 0 {
		assert.GreaterOrEqual(t, maxClientHeartbeats, want.clientHeartbeats, "empty frames (heartbeats) from the client on one connection")
	}
	return fmt.Sprintf("%d connections, %d messages sent, %d delivered, byte for byte but %d (RabbitMQ's vbin32 rewrite); %d repeated; heartbeats: %d from the broker, %d from the client",
		len(recs), nSent, nDelivered, rewritten, repeats, heartbeats, clientHeartbeats)
}

// emptyFrames counts a stream's empty frames: heartbeats.
func emptyFrames(s *Stream) int {
	n := 0
	for _, f := range s.Frames {
		if f.Type == 0 && len(f.Body) == 0 {
			n++
		}
	}
	return n
}

// bareMessage is the bare message of a delivery's payload (sections from
// properties to application-data), or the whole payload when message
// does not find one: what a broker must pass on unchanged.
func bareMessage(data []byte) []byte {
	if sc, err := message.Scan(data); err == nil && sc.Bare != nil {
		return sc.Bare
	}
	return data
}

// rabbitBare undoes RabbitMQ 3.10's one rewrite of the bare messages of
// these tests: it sends a data section of exactly 255 bytes as vbin32
// (0xb0 0x000000ff) where the client wrote vbin8 (0xa0 0xff), as if vbin8
// held at most 254 bytes. Seen with the engine's and rhea's messages.
func rabbitBare(bare []byte) []byte {
	from := []byte{0x00, 0x53, 0x75, 0xb0, 0x00, 0x00, 0x00, 0xff}
	i := bytes.Index(bare, from)
	if i < 0 || len(bare)-i-len(from) < 255 {
		return bare
	}
	out := append([]byte{}, bare[:i]...)
	out = append(out, 0x00, 0x53, 0x75, 0xa0, 0xff)
	return append(out, bare[i+len(from):]...)
}

// errorsAs is errors.As for a target type T.
func errorsAs[T error](err error) (T, bool) {
	var target T
	ok := errors.As(err, &target)
	return target, ok
}

// withTimeout runs f with a context that ends after d.
func withTimeout(d time.Duration, f func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return f(ctx)
}
