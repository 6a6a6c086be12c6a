package amqp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/amqpsax/amqpsax/client"
)

// go-amqp's defaults that differ from client's (its MaxSessions is 65536:
// client's is a uint16).
const (
	defaultIdleTimeout = time.Minute
	defaultMaxSessions = 65535
)

// Conn is an AMQP connection.
type Conn struct {
	c       *client.Conn
	closing atomic.Bool      // Close was called: a clean end is then no error
	sasl    *client.SASLType // what a SASLType chose, while the Conn is set up
}

// connOptions turns go-amqp's options into client's; urlUser says the
// URL carries a user (then PLAIN, whatever SASLType says).
func connOptions(opts *ConnOptions, urlUser bool) (client.ConnOptions, error) {
	var o ConnOptions
	if opts != nil {
		o = *opts
	}
	co := client.ConnOptions{
		ContainerID:  o.ContainerID,
		HostName:     o.HostName,
		IdleTimeout:  defaultIdleTimeout,
		MaxFrameSize: o.MaxFrameSize,
		TLSConfig:    o.TLSConfig,
		Properties:   o.Properties,
		MaxSessions:  o.MaxSessions,
		// go-amqp sends PLAIN and XOAUTH2 over plain TCP when asked to
		// (its documentation warns against it); client refuses unless
		// allowed.
		AllowInsecurePlain: true,
	}
	if co.MaxSessions == 0 {
		co.MaxSessions = defaultMaxSessions
	}
	switch {
	case o.IdleTimeout > 0:
		co.IdleTimeout = o.IdleTimeout
	case o.IdleTimeout < 0:
		co.IdleTimeout = 0
	}
	if o.MaxFrameSize > 0 && o.MaxFrameSize < 512 {
		return co, fmt.Errorf("invalid MaxFrameSize value %d", o.MaxFrameSize)
	}
	switch {
	case urlUser:
		// client takes PLAIN with the URL's user, as go-amqp does
		// whatever SASLType says.
	case o.SASLType != nil:
		var c Conn
		if err := o.SASLType(&c); err != nil {
			return co, err
		}
		if c.sasl == nil {
			return co, errors.New("amqp: the SASLType chose no mechanism")
		}
		co.SASLType = *c.sasl
	default:
		co.SASLType = client.SASLTypeNone() // go-amqp negotiates no SASL unless asked to
	}
	return co, nil
}

// Dial connects to an AMQP broker.
//
// If the addr includes a scheme, it must be "amqp", "amqps", or "amqp+ssl".
// If no port is provided, 5672 will be used for "amqp" and 5671 for "amqps" or "amqp+ssl".
//
// If username and password information is not empty it's used as SASL PLAIN
// credentials, equal to passing ConnSASLPlain option.
//
// opts: pass nil to accept the default values.
func Dial(ctx context.Context, addr string, opts *ConnOptions) (*Conn, error) {
	u, err := url.Parse(addr)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // not its URL, which may hold a password
		}
		return nil, fmt.Errorf("amqp: address: %w", err)
	}
	switch u.Scheme {
	case "amqp", "amqps":
	case "amqp+ssl":
		addr = "amqps" + strings.TrimPrefix(addr, u.Scheme)
	case "":
		addr = "amqp://" + addr
	default:
		return nil, fmt.Errorf("unsupported scheme %q", u.Scheme)
	}
	co, err := connOptions(opts, u.User != nil)
	if err != nil {
		return nil, err
	}
	cc, err := client.Dial(ctx, addr, &co)
	if err != nil {
		return nil, mapErr(redactDialError(err), onConn, nil)
	}
	return &Conn{c: cc}, nil
}

// redactDialError returns err with the password of its address
// replaced by "xxxxx": client.DialError's text holds the URL as given.
func redactDialError(err error) error {
	de, ok := err.(*client.DialError)
	if !ok {
		return err
	}
	u, perr := url.Parse(de.Addr)
	if perr != nil || u.User == nil {
		return err
	}
	if _, has := u.User.Password(); !has {
		return err
	}
	return &client.DialError{Addr: u.Redacted(), Stage: de.Stage, Err: de.Err}
}

// NewConn establishes a new AMQP client connection over conn.
// NOTE: [Conn] takes ownership of the provided [net.Conn] and will close it as required.
// opts: pass nil to accept the default values.
func NewConn(ctx context.Context, conn net.Conn, opts *ConnOptions) (*Conn, error) {
	co, err := connOptions(opts, false)
	if err != nil {
		return nil, err
	}
	cc, err := client.NewConn(ctx, conn, &co)
	if err != nil {
		return nil, mapErr(err, onConn, nil)
	}
	return &Conn{c: cc}, nil
}

// Close closes the connection.
//
// Returns nil if there were no errors during shutdown,
// or a *ConnError. This error is not actionable and is
// purely for diagnostic purposes.
//
// The error returned by subsequent calls to Close is
// idempotent, so the same value will always be returned.
func (c *Conn) Close() error {
	c.closing.Store(true)
	return c.endErr(c.c.Close())
}

// endErr is the error the connection ended with, as go-amqp gives it:
// nil for a clean close this end asked for, else a *ConnError.
func (c *Conn) endErr(err error) error {
	if err == nil || (errors.Is(err, client.ErrClosed) && c.closing.Load()) {
		return nil
	}
	return mapErr(err, onConn, nil)
}

// Done returns a channel that's closed when Conn is closed.
func (c *Conn) Done() <-chan struct{} { return c.c.Done() }

// Err returns nil while Done is not yet closed.
// If Done is closed, Err returns nil or a *ConnError explaining why.
// A nil error indicates that [Close] was called and there
// were no errors during shutdown.
//
// A *ConnError indicates one of three things
//   - there was an error during shutdown from a client-side call to [Close]. the
//     error is not actionable and is purely for diagnostic purposes.
//   - a fatal error was encountered that caused [Conn] to close
//   - the peer closed the connection. [ConnError.RemoteErr] MAY contain an error
//     from the peer indicating why it closed the connection
func (c *Conn) Err() error {
	select {
	case <-c.c.Done():
	default:
		return nil
	}
	err := c.c.Err()
	if err == nil {
		return nil
	}
	if errors.Is(err, client.ErrClosed) && !c.closing.Load() {
		return &ConnError{} // the peer closed it, with no error
	}
	return c.endErr(err)
}

// NewSession starts a new session on the connection.
//   - ctx controls waiting for the peer to acknowledge the session
//   - opts contains optional values, pass nil to accept the defaults
//
// If the context's deadline expires or is cancelled before the operation
// completes, an error is returned. If the Session was successfully
// created, it will be cleaned up in future calls to NewSession.
func (c *Conn) NewSession(ctx context.Context, opts *SessionOptions) (*Session, error) {
	if err := ctx.Err(); err != nil {
		return nil, err // go-amqp begins nothing with an ended ctx
	}
	var max int
	if opts != nil && opts.MaxLinks > 0 {
		max = int(min(uint64(opts.MaxLinks), 1<<31-1))
	}
	s, err := c.c.NewSession(ctx, nil)
	if err != nil {
		return nil, mapErr(err, onConn, c.c)
	}
	return &Session{s: s, conn: c, maxLinks: max}, nil
}

// Properties returns the peer's connection properties.
// Returns nil if the peer didn't send any properties.
func (c *Conn) Properties() map[string]any { return c.c.Properties() }
