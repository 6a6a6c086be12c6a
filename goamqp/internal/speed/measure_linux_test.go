package speed

import (
	"os"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// What the timed part of a benchmark cost besides its time, reported per
// message: this process's CPU time (cpu-µs/msg), the broker's when
// SPEED_BROKER_PID names its process (broker-µs/msg, from
// /proc/PID/stat, in clock ticks), and this process's read and write
// system calls (reads/msg, writes/msg, from /proc/self/io: how well
// messages share a write). With SPEED_CPUPROFILE set, the timed part
// alone is CPU-profiled into that file (the last run's); with
// SPEED_TRACE set, it is traced into that file (runtime/trace, the last
// run's): where goroutines wait and who wakes them, for go tool trace.
var start struct {
	cpu, broker   float64
	reads, writes float64
	prof, trace   *os.File
}

func measureBegin() {
	if p := os.Getenv("SPEED_CPUPROFILE"); p != "" {
		if f, err := os.Create(p); err == nil && pprof.StartCPUProfile(f) == nil {
			start.prof = f
		}
	}
	if p := os.Getenv("SPEED_TRACE"); p != "" {
		if f, err := os.Create(p); err == nil {
			if trace.Start(f) == nil {
				start.trace = f
			} else {
				f.Close()
			}
		}
	}
	start.cpu, start.broker = cpuMicros(), brokerMicros()
	start.reads, start.writes = syscalls()
}

func measureEnd(b *testing.B) {
	if start.prof != nil {
		pprof.StopCPUProfile()
		start.prof.Close()
		start.prof = nil
	}
	if start.trace != nil {
		trace.Stop()
		start.trace.Close()
		start.trace = nil
	}
	n := float64(b.N)
	b.ReportMetric((cpuMicros()-start.cpu)/n, "cpu-µs/msg")
	if br := brokerMicros(); br > 0 {
		b.ReportMetric((br-start.broker)/n, "broker-µs/msg")
	}
	if r, w := syscalls(); r > 0 {
		b.ReportMetric((r-start.reads)/n, "reads/msg")
		b.ReportMetric((w-start.writes)/n, "writes/msg")
	}
}

// cpuMicros is this process's user and system time, in µs.
func cpuMicros() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e3
}

// brokerMicros is the user and system time of the process
// SPEED_BROKER_PID names, in µs (0 without one).
func brokerMicros() float64 {
	pid := os.Getenv("SPEED_BROKER_PID")
	if pid == "" {
		return 0
	}
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		s = s[i+1:] // after the command's name, which may hold spaces
	}
	f := strings.Fields(s) // from field 3 (state) on
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) * 1e6 / 100 // USER_HZ: 100 on Linux
}

// syscalls is this process's read and write system calls so far.
func syscalls() (reads, writes float64) {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, ": ")
		n, _ := strconv.ParseFloat(v, 64)
		switch k {
		case "syscr":
			reads = n
		case "syscw":
			writes = n
		}
	}
	return reads, writes
}
