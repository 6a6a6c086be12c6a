// Command pingpong is the bare TCP round trip that package client's
// blocking Send is set beside (BenchmarkClient, impl=tcp-pingpong): a
// process of its own on loopback that, for each connection, reads a
// request of -req bytes and answers -resp bytes, until the connection
// ends. It prints "listening on ADDR" once ready.
//
//	go run ./cmd/pingpong -req 187 -resp 22
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "the address to listen on")
	req := flag.Int("req", 0, "bytes of each request")
	resp := flag.Int("resp", 0, "bytes of each answer")
	flag.Parse()
	if *req <= 0 || *resp <= 0 {
		fmt.Fprintln(os.Stderr, "usage: pingpong -req N -resp N [-listen addr]")
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("listening on", ln.Addr())
	for {
		nc, err := ln.Accept()
		if err != nil {
			log.Fatal(err)
		}
		go serve(nc, *req, *resp)
	}
}

// serve answers each request of req bytes on nc with resp bytes.
func serve(nc net.Conn, req, resp int) {
	defer nc.Close()
	r := bufio.NewReader(nc)
	in, out := make([]byte, req), make([]byte, resp)
	for {
		if _, err := io.ReadFull(r, in); err != nil {
			return
		}
		if _, err := nc.Write(out); err != nil {
			return
		}
	}
}
