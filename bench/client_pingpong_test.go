package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/amqpsax/amqpsax/frame"
)

// The floor under op=send: impl=tcp-pingpong is a bare TCP round trip
// between this process and another (cmd/pingpong) on the same loopback,
// of the bytes one blocking Send puts on the wire and gets back: a
// transfer frame carrying the benchmark's message, answered by a
// disposition frame (accepted, settled). A blocking Send cannot take less
// than one such round trip; its ns/op beside this one's is the client's
// and the broker's cost on top of the network's.

// pingpongSizes are the request (transfer frame and message) and answer
// (disposition frame) sizes of one unsettled Send.
func pingpongSizes() (req, resp int) {
	m, err := amqpsaxMsg().Append(nil)
	if err != nil {
		panic(err)
	}
	t := frame.BeginFrame(nil, frame.TypeAMQP, 0)
	t = frame.AppendTransfer(t, frame.Transfer{Handle: 0, DeliveryID: frame.Some[uint32](1000),
		DeliveryTag: []byte{0, 0, 0, 0, 0, 0, 3, 232}, MessageFormat: frame.Some[uint32](0)})
	t = frame.EndFrame(append(t, m...), 0)
	d := frame.BeginFrame(nil, frame.TypeAMQP, 0)
	d = frame.AppendDisposition(d, frame.Disposition{Role: frame.RoleReceiver, First: 1000, Settled: true,
		State: frame.DeliveryState{Type: frame.StateAccepted}})
	d = frame.EndFrame(d, 0)
	return len(t), len(d)
}

var (
	pingpongBuild    sync.Once
	pingpongBinary   string
	pingpongBuildErr error
)

// startPingpong builds cmd/pingpong (once per test binary) and starts it
// until tb ends; it returns its address.
func startPingpong(tb testing.TB, req, resp int) string {
	pingpongBuild.Do(func() {
		dir, err := os.MkdirTemp("", "amqpsax-bench-pingpong")
		if err != nil {
			pingpongBuildErr = err
			return
		}
		pingpongBinary = filepath.Join(dir, "pingpong")
		if out, err := exec.Command("go", "build", "-o", pingpongBinary, "./cmd/pingpong").CombinedOutput(); err != nil {
			pingpongBuildErr = fmt.Errorf("building cmd/pingpong: %v\n%s", err, out)
		}
	})
	if pingpongBuildErr != nil {
		tb.Fatal(pingpongBuildErr)
	}
	cmd := exec.Command(pingpongBinary, "-req", fmt.Sprint(req), "-resp", fmt.Sprint(resp))
	dieWithParent(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		tb.Fatalf("cmd/pingpong: %v", err)
	}
	return strings.TrimSpace(strings.TrimPrefix(line, "listening on "))
}

// pingpongImpl is impl=tcp-pingpong: send is n round trips; it has no
// queue.
type pingpongImpl struct {
	nc        net.Conn
	req, resp []byte
}

func dialPingpong(tb testing.TB) (*pingpongImpl, error) {
	req, resp := pingpongSizes()
	nc, err := net.Dial("tcp", startPingpong(tb, req, resp))
	if err != nil {
		return nil, err
	}
	return &pingpongImpl{nc: nc, req: make([]byte, req), resp: make([]byte, resp)}, nil
}

func (p *pingpongImpl) send(ctx context.Context, n int) error {
	for range n {
		if _, err := p.nc.Write(p.req); err != nil {
			return err
		}
		if _, err := io.ReadFull(p.nc, p.resp); err != nil {
			return err
		}
	}
	return nil
}

func (p *pingpongImpl) pipelined(ctx context.Context, n int) error { return p.send(ctx, n) }
func (p *pingpongImpl) fill(context.Context, int) error            { return nil }
func (p *pingpongImpl) receive(context.Context, int, bool) error   { return nil }
func (p *pingpongImpl) queueName() string                          { return "" }
func (p *pingpongImpl) close() error                               { return p.nc.Close() }

// TestPingpongSizes: the round trip's sizes are those of a Send's frames
// (a transfer of the 100-byte-body message, a disposition).
func TestPingpongSizes(t *testing.T) {
	req, resp := pingpongSizes()
	if req < 150 || req > 250 || resp < 15 || resp > 40 {
		t.Fatalf("request %d bytes, answer %d: not the sizes of a transfer of the benchmark's message and a disposition", req, resp)
	}
	p, err := dialPingpong(t)
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	if err := p.send(context.Background(), 100); err != nil {
		t.Fatal(err)
	}
}
