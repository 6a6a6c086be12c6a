// Command ratio compares two implementations of one task, workload by
// workload, on a machine too busy for benchstat's separate runs to agree:
// it times the two in adjacent short windows (about 200 µs each, the peer
// then ours, 301 times) and prints the median and quartiles of the
// per-window ratio peer ÷ ours, and the ratio of the two fastest windows.
// Load from elsewhere lands on both sides of a pair alike, so the ratio
// holds still where each side's time does not.
//
//	go run -tags proton ./cmd/ratio Decode proton-message message-owned
//	go run ./cmd/ratio Encode goamqp message-build-map
package main

import (
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/amqpsax/amqpsax/bench"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: ratio TASK PEER OURS")
		os.Exit(2)
	}
	task, peerName, oursName := os.Args[1], os.Args[2], os.Args[3]
	peer, ours := find(task, peerName), find(task, oursName)
	fmt.Printf("%s: %s ÷ %s, median (q1–q3) of 301 adjacent windows; fastest ÷ fastest; ours per op\n", task, peerName, oursName)
	for _, w := range bench.Workloads() {
		if !peer.Applies(w) || !ours.Applies(w) {
			continue
		}
		a, b := peer.New(w), ours.New(w)
		for _, op := range []*bench.Op{&a, &b} {
			if err := run(op, 1); err != nil {
				fail(err)
			}
			if err := op.Check(); err != nil {
				fail(fmt.Errorf("%s: %w", w.Name, err))
			}
		}
		n := 1
		for timed(&b, n) < 200*time.Microsecond {
			n *= 2
		}
		var rs []float64
		fa, fb := time.Duration(1<<62), time.Duration(1<<62)
		for range 301 {
			da, db := timed(&a, n), timed(&b, n)
			fa, fb = min(fa, da), min(fb, db)
			rs = append(rs, float64(da)/float64(db))
		}
		slices.Sort(rs)
		fmt.Printf("%-20s %6.2fx (%.2f–%.2f)  fastest %6.2fx  ours %v/op\n",
			w.Name, rs[150], rs[75], rs[225], float64(fa)/float64(fb), fb/time.Duration(n))
		for _, op := range []*bench.Op{&a, &b} {
			if op.Close != nil {
				op.Close()
			}
		}
	}
}

func find(task, name string) *bench.Impl {
	for i := range bench.Impls {
		if bench.Impls[i].Task == task && bench.Impls[i].Name == name {
			return &bench.Impls[i]
		}
	}
	fail(fmt.Errorf("no implementation %s of %s (Proton's need -tags proton)", name, task))
	return nil
}

func run(op *bench.Op, n int) error {
	if op.RunN != nil {
		return op.RunN(n)
	}
	for range n {
		if err := op.Run(); err != nil {
			return err
		}
	}
	return nil
}

func timed(op *bench.Op, n int) time.Duration {
	t0 := time.Now()
	if err := run(op, n); err != nil {
		fail(err)
	}
	return time.Since(t0)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "ratio:", err)
	os.Exit(1)
}
