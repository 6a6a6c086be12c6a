// Command record runs one client program through a recording proxy in
// front of an AMQP broker and writes each connection's two byte streams.
//
//	record -broker 127.0.0.1:5672 -out DIR -name NAME -- PROGRAM ARGS...
//
// PROGRAM is started with AMQP_ADDR set to the proxy's host:port (the
// clients of interop/ connect there). With -tls the proxy takes TLS from
// the client, with a throwaway self-signed certificate whose PEM file is
// named by AMQP_CA, and records the AMQP bytes inside. When it exits the proxy waits for
// its connections to end and writes DIR/NAME-N-client.bin (client to
// broker) and DIR/NAME-N-server.bin (broker to client) for every
// connection N, from 1 in accept order. The exit status is the program's.
package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/amqpsax/amqpsax/interop"
)

func main() { os.Exit(run()) }

func run() int {
	broker := flag.String("broker", "127.0.0.1:5672", "the broker's host:port")
	out := flag.String("out", ".", "directory for the recorded streams")
	name := flag.String("name", "conn", "file name prefix")
	useTLS := flag.Bool("tls", false, "clients connect with TLS (AMQP_CA names the certificate to trust)")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: record -broker HOST:PORT -out DIR -name NAME -- PROGRAM ARGS...")
		return 2
	}
	var cfg *tls.Config
	env := os.Environ()
	if *useTLS {
		var ca []byte
		var err error
		if cfg, ca, err = interop.SelfSigned(); err != nil {
			fmt.Fprintln(os.Stderr, "record:", err)
			return 1
		}
		dir, err := os.MkdirTemp("", "record-ca")
		if err != nil {
			fmt.Fprintln(os.Stderr, "record:", err)
			return 1
		}
		defer os.RemoveAll(dir)
		caFile := filepath.Join(dir, "ca.pem")
		if err := os.WriteFile(caFile, ca, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "record:", err)
			return 1
		}
		env = append(env, "AMQP_CA="+caFile)
	}
	tap, err := interop.NewTap(*broker, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "record:", err)
		return 1
	}
	cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
	cmd.Env = append(env, "AMQP_ADDR="+tap.Addr())
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	runErr := cmd.Run()
	if err := tap.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "record:", err)
	}
	paths, err := interop.WriteConns(*out, *name, tap.Conns())
	for _, p := range paths {
		st, _ := os.Stat(p)
		fmt.Fprintf(os.Stderr, "record: %s (%d bytes)\n", p, st.Size())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "record:", err)
		return 1
	}
	if runErr != nil {
		fmt.Fprintf(os.Stderr, "record: %s: %v\n", flag.Arg(0), runErr)
		if ee, ok := runErr.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		return 1
	}
	return 0
}
