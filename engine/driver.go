package engine

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/amqpsax/amqpsax/frame"
)

// The driver runs Conns over net.Conns: the only part of the package that
// does I/O or starts goroutines. It is thin: a loop per connection that
// writes the engine's output, feeds it what was read, and ticks its
// timers.

// readSize is the size of each read buffer.
const readSize = 64 << 10

// Driver runs one Conn over one net.Conn: its events run on the driver's
// goroutine. Do runs a function there, from any goroutine.
type Driver struct {
	c  *Conn
	nc net.Conn

	do    chan func(*Conn)
	stop  chan struct{} // closed: close the connection
	done  chan struct{} // closed when the loop has ended
	once  sync.Once
	err   error
	reads chan readResult
	free  chan []byte
}

type readResult struct {
	buf []byte
	n   int
	err error
}

// NewDriver returns a Driver for c over nc; Run runs it.
func NewDriver(nc net.Conn, c *Conn) *Driver {
	d := &Driver{c: c, nc: nc, do: make(chan func(*Conn), 256), stop: make(chan struct{}),
		done: make(chan struct{}), reads: make(chan readResult, 1), free: make(chan []byte, 2)}
	c.drv = d
	return d
}

// Driver returns the Driver running the connection, or nil.
func (c *Conn) Driver() *Driver { return c.drv }

// Conn returns the driver's connection; use it only on the driver's
// goroutine (in events, or in a function given to Do).
func (d *Driver) Conn() *Conn { return d.c }

// NetConn returns the network connection.
func (d *Driver) NetConn() net.Conn { return d.nc }

// Do queues f to run on the driver's goroutine, with the connection; it
// blocks while 256 are queued, so call it from other goroutines (an event
// of this connection acts on it directly). After the loop has ended it
// does nothing and reports false.
func (d *Driver) Do(f func(c *Conn)) bool {
	select {
	case d.do <- f:
		return true
	case <-d.done:
		return false
	}
}

// Close closes the connection (close with no error, or amqp:connection:
// forced "shutdown" when given one) and, after grace, the network
// connection, without waiting.
func (d *Driver) Close() {
	d.once.Do(func() { close(d.stop) })
}

// Wait waits for the loop to end and returns the connection's error (nil
// after a clean close).
func (d *Driver) Wait() error {
	<-d.done
	return d.err
}

// Done is closed when the loop has ended.
func (d *Driver) Done() <-chan struct{} { return d.done }

// Run runs the connection until it is done, the network connection fails,
// or ctx is done (then it closes it: close, and the network connection
// once written or after 5 s). It closes the network connection before it
// returns, and returns the connection's error (nil after a clean close).
func (d *Driver) Run(ctx context.Context) error {
	defer close(d.done)
	defer d.nc.Close()
	c := d.c
	for range 2 {
		d.free <- make([]byte, readSize)
	}
	go d.reader()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	stop := d.stop
	ctxDone := ctx.Done()
	var grace <-chan time.Time
	reading := true
	deadline := false
	for {
		if c.Closed() && !deadline {
			// Over: what is left to write has CloseWait to go out.
			deadline = true
			d.nc.SetWriteDeadline(time.Now().Add(CloseWait))
		}
		if err := d.flush(); err != nil {
			c.CloseRead()
			d.flush()
			break
		}
		if c.Done() {
			break
		}
		now := time.Now()
		next := c.Tick(now)
		if err := d.flush(); err != nil {
			c.CloseRead()
			break
		}
		if c.Done() {
			break
		}
		if !next.IsZero() {
			timer.Reset(next.Sub(now))
		} else {
			timer.Reset(time.Hour)
		}
		reads := d.reads
		if !reading || !c.WantRead() {
			reads = nil
		}
		select {
		case r := <-reads:
			if r.n > 0 {
				c.Feed(r.buf[:r.n], time.Now())
			}
			d.free <- r.buf
			if r.err != nil {
				reading = false
				c.CloseRead()
			}
		case f := <-d.do:
			f(c)
		case <-timer.C:
		case <-stop:
			stop = nil
			d.shutdown()
			grace = time.After(5 * time.Second)
		case <-ctxDone:
			ctxDone = nil
			d.shutdown()
			grace = time.After(5 * time.Second)
		case <-grace:
			c.CloseRead()
		}
	}
	d.err = nil
	if e := c.Err(); e != nil && !(!e.Remote && e.Condition == frame.CondConnectionForced && e.Description == "shutdown") {
		d.err = e
	}
	return d.err
}

func (d *Driver) shutdown() {
	c := d.c
	d.nc.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if c.Close(NewError(frame.CondConnectionForced, "shutdown")) != nil && !c.Closed() {
		c.CloseRead()
	}
}

// flush writes the engine's output.
func (d *Driver) flush() error {
	c := d.c
	for {
		out := c.Output()
		if len(out) == 0 {
			return nil
		}
		n, err := d.nc.Write(out)
		c.Written(n)
		if err != nil {
			return err
		}
	}
}

// reader reads into the free buffers and hands them to the loop.
func (d *Driver) reader() {
	for {
		var buf []byte
		select {
		case buf = <-d.free:
		case <-d.done:
			return
		}
		n, err := d.nc.Read(buf)
		select {
		case d.reads <- readResult{buf, n, err}:
		case <-d.done:
			return
		}
		if err != nil {
			return
		}
	}
}

// Dial connects to addr (network "tcp") as a client and runs the
// connection on a new goroutine: events reach h there. With tlsConfig set
// the connection is TLS (amqps). Use the Driver's Do to act on the
// connection, Wait for its end.
func Dial(ctx context.Context, network, addr string, cfg Config, tlsConfig *tls.Config, h Handler) (*Driver, error) {
	var dl net.Dialer
	nc, err := dl.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	if tlsConfig != nil {
		tc := tls.Client(nc, tlsConfig)
		if err := tc.HandshakeContext(ctx); err != nil {
			nc.Close()
			return nil, err
		}
		nc = tc
	}
	d := NewDriver(nc, NewClient(cfg, h))
	go d.Run(context.WithoutCancel(ctx))
	return d, nil
}

// Server serves AMQP connections from a listener, each on its own
// goroutine, as the server end.
type Server struct {
	// Config is each connection's configuration.
	Config Config
	// Handler receives every connection's events, on each connection's
	// own goroutine: concurrently for different connections.
	Handler Handler
	// TLSConfig, when set, makes every connection TLS (amqps): the
	// handshake comes first, and a client certificate makes the engine
	// offer SASL EXTERNAL.
	TLSConfig *tls.Config

	mu      sync.Mutex
	ln      []net.Listener
	drivers map[*Driver]struct{}
	closed  bool
	wg      sync.WaitGroup
}

// ErrServerClosed is what Serve returns after Shutdown or Close.
var ErrServerClosed = errors.New("engine: server closed")

// Serve serves connections from ln until ln fails or the server is shut
// down, with cfg and h, as Server.Serve does.
func Serve(ln net.Listener, cfg Config, h Handler) error {
	return (&Server{Config: cfg, Handler: h}).Serve(ln)
}

// Serve accepts connections from ln and runs each on a new goroutine. It
// returns ErrServerClosed after Shutdown or Close, else the error of
// Accept.
func (srv *Server) Serve(ln net.Listener) error {
	srv.mu.Lock()
	if srv.closed {
		srv.mu.Unlock()
		return ErrServerClosed
	}
	srv.ln = append(srv.ln, ln)
	if srv.drivers == nil {
		srv.drivers = make(map[*Driver]struct{})
	}
	srv.mu.Unlock()
	for {
		nc, err := ln.Accept()
		if err != nil {
			srv.mu.Lock()
			closed := srv.closed
			srv.mu.Unlock()
			if closed {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			return err
		}
		srv.wg.Add(1)
		go srv.serveConn(nc)
	}
}

func (srv *Server) serveConn(nc net.Conn) {
	defer srv.wg.Done()
	cfg := srv.Config
	if srv.TLSConfig != nil {
		tc := tls.Server(nc, srv.TLSConfig)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := tc.HandshakeContext(ctx)
		cancel()
		if err != nil {
			nc.Close()
			return
		}
		cfg.PeerCertificates = tc.ConnectionState().PeerCertificates
		nc = tc
	}
	d := NewDriver(nc, NewServer(cfg, srv.Handler))
	srv.mu.Lock()
	if srv.closed {
		srv.mu.Unlock()
		nc.Close()
		return
	}
	srv.drivers[d] = struct{}{}
	srv.mu.Unlock()
	d.Run(context.Background())
	srv.mu.Lock()
	delete(srv.drivers, d)
	srv.mu.Unlock()
}

// Shutdown stops accepting, closes every connection (close with
// amqp:connection:forced) and waits for them to end, or for ctx; then it
// closes what is left.
func (srv *Server) Shutdown(ctx context.Context) error {
	srv.mu.Lock()
	srv.closed = true
	for _, ln := range srv.ln {
		ln.Close()
	}
	for d := range srv.drivers {
		d.Close()
	}
	srv.mu.Unlock()
	ended := make(chan struct{})
	go func() { srv.wg.Wait(); close(ended) }()
	select {
	case <-ended:
		return nil
	case <-ctx.Done():
		srv.mu.Lock()
		for d := range srv.drivers {
			d.nc.Close()
		}
		srv.mu.Unlock()
		<-ended
		return ctx.Err()
	}
}

// Close closes the listeners and every network connection at once.
func (srv *Server) Close() error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	srv.Shutdown(ctx)
	return nil
}
