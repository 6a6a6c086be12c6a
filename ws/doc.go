// Package ws carries AMQP 1.0 over WebSockets, as the OASIS AMQP
// WebSocket Binding (WSB) Version 1.0 describes: the WebSocket
// subprotocol "amqp", the AMQP byte stream (protocol headers, SASL and
// AMQP frames) in binary messages, any frame split over messages or
// several frames in one, and a text message a protocol violation. It
// gives a net.Conn to package driver's Driver, so the engine runs over a
// WebSocket unchanged:
//
//	nc, err := ws.Dial(ctx, "ws://host:5673/", nil)     // or wss://
//	d := driver.NewDriver(nc, engine.NewClient(cfg, h))
//	go d.Run(ctx)
//
// and a server is driver.Server (or any code that serves a net.Listener)
// over a Listener, which is an http.Handler as well: mount it where
// WebSocket clients come in, or let Listen run the HTTP server:
//
//	ln, err := ws.Listen("127.0.0.1:5673", nil)         // ws://127.0.0.1:5673/
//	srv := &driver.Server{Config: cfg, Handler: h}
//	srv.Serve(ln)
//
// The package is a module of its own, so that its WebSocket library
// (github.com/coder/websocket) is no dependency of the library module.
//
// # The binding's rules
//
// A client asks for the subprotocol "amqp" and refuses a server that does
// not choose it; a server refuses (HTTP 400 before the upgrade, status
// 1002 after it) a client that does not offer it. Messages are binary; a
// text message closes the WebSocket (status 1003). A message's size is
// not limited here: the engine bounds what it reads by its frame size
// (engine.Config.MaxFrameSize), reading a message as it arrives.
// WebSocket compression is off (WSB leaves it out).
//
// # Time-outs and credentials
//
// Listen's HTTP server cuts off a client that has not finished its TLS
// handshake, and then the upgrade request's header, within
// DefaultHeaderTimeout (30 s, as the engine bounds an AMQP handshake), and
// one that waits between requests without upgrading beyond
// DefaultIdleTimeout; ListenWith sets both (ListenOptions). A Listener
// mounted on a server of one's own is bounded by that server's
// http.Server time-outs. Once upgraded, a connection is the engine's.
//
// Dial never sends a URL's user and password on the upgrade request (the
// client package reads them for SASL, inside the AMQP connection); with
// DialOptions.BasicAuth it sends them as HTTP Basic authentication, which
// over ws:// is in the clear. No error of Dial carries the URL's password.
//
// TLS (wss://) is the WebSocket's: Dial takes wss:// URLs (with
// DialOptions.TLSConfig), and a Listener serves TLS when Listen is given
// a tls.Config. AMQP's own TLS header is not used over a WebSocket.
package ws
