package interop

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// SpyTap is a Tap that runs cmd/amqpspy between the clients and the
// broker: amqpspy forwards every byte, prints every frame of both
// directions (to a file, read by Faults) and records both streams of each
// connection (its -record), which Conns returns. For clients that connect
// with TLS, a Recorder terminating TLS sits in front of amqpspy and hands
// it the plaintext.
type SpyTap struct {
	cmd   *exec.Cmd
	addr  string // where amqpspy listens
	dir   string // its recordings and printout
	front *Recorder
	done  chan error
	once  sync.Once
	err   error
}

var (
	spyBuild    sync.Once
	spyBinary   string
	spyBuildErr error
)

// buildSpy builds cmd/amqpspy (a module of its own, beside this one) once.
func buildSpy() (string, error) {
	spyBuild.Do(func() {
		dir, err := os.MkdirTemp("", "amqpspy")
		if err != nil {
			spyBuildErr = err
			return
		}
		spyBinary = filepath.Join(dir, "amqpspy")
		cmd := exec.Command("go", "build", "-o", spyBinary, "./amqpspy")
		cmd.Dir = filepath.Join("..", "cmd")
		if out, err := cmd.CombinedOutput(); err != nil {
			spyBuildErr = fmt.Errorf("building cmd/amqpspy: %v\n%s", err, out)
		}
	})
	return spyBinary, spyBuildErr
}

// NewSpyTap starts amqpspy in front of the broker at upstream, with a TLS
// front when cfg is not nil.
func NewSpyTap(upstream string, cfg *tls.Config) (Tap, error) {
	bin, err := buildSpy()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "amqpspy-run")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "-listen", "127.0.0.1:0", "-target", upstream,
		"-record", filepath.Join(dir, "rec"), "-out", filepath.Join(dir, "frames.txt"))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := os.Mkdir(filepath.Join(dir, "rec"), 0o755); err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &SpyTap{cmd: cmd, dir: dir, done: make(chan error, 1)}
	// amqpspy says where it listens on its first line of standard error.
	lines := bufio.NewScanner(stderr)
	addr := make(chan string, 1)
	go func() {
		var rest strings.Builder
		for lines.Scan() {
			// "amqpspy: listening on ADDR, forwarding to TARGET"
			if a, ok := strings.CutPrefix(lines.Text(), "amqpspy: listening on "); ok {
				a, _, _ = strings.Cut(a, ",")
				addr <- a
				continue
			}
			rest.WriteString(lines.Text() + "\n")
		}
		os.WriteFile(filepath.Join(dir, "stderr.txt"), []byte(rest.String()), 0o644)
		s.done <- cmd.Wait()
	}()
	select {
	case s.addr = <-addr:
	case err := <-s.done:
		return nil, fmt.Errorf("amqpspy exited before listening: %v", err)
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		return nil, errors.New("amqpspy did not say where it listens in 10 s")
	}
	if cfg != nil {
		if s.front, err = NewTLSRecorder(s.addr, cfg); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// Addr is where clients connect: amqpspy, or its TLS front.
func (s *SpyTap) Addr() string {
	if s.front != nil {
		return s.front.Addr()
	}
	return s.addr
}

// Close closes the TLS front, then stops amqpspy (SIGINT: it closes its
// connections and its recordings), waiting at most 20 s.
func (s *SpyTap) Close() error {
	s.once.Do(func() {
		if s.front != nil {
			s.err = s.front.Close()
		}
		// Let connections the clients closed end on their own first.
		time.Sleep(200 * time.Millisecond)
		s.cmd.Process.Signal(syscall.SIGINT)
		select {
		case err := <-s.done:
			if err != nil && s.err == nil {
				s.err = fmt.Errorf("amqpspy: %v", err)
			}
		case <-time.After(20 * time.Second):
			s.cmd.Process.Kill()
			s.err = errors.New("amqpspy did not exit within 20 s of SIGINT")
		}
	})
	return s.err
}

var recName = regexp.MustCompile(`^conn-(\d+)-(client|server)\.bin$`)

// Conns returns the connections amqpspy recorded, in the order it
// accepted them. Call it after Close.
func (s *SpyTap) Conns() []Conn {
	entries, _ := os.ReadDir(filepath.Join(s.dir, "rec"))
	byNum := map[int]*Conn{}
	for _, e := range entries {
		m := recName.FindStringSubmatch(e.Name())
		if m == nil {
			continue // an .incomplete recording: Faults reports it
		}
		n, _ := strconv.Atoi(m[1])
		b, err := os.ReadFile(filepath.Join(s.dir, "rec", e.Name()))
		if err != nil {
			continue
		}
		c := byNum[n]
		if c == nil {
			c = &Conn{}
			byNum[n] = c
		}
		if m[2] == "client" {
			c.Client = b
		} else {
			c.Server = b
		}
	}
	nums := make([]int, 0, len(byNum))
	for n := range byNum {
		nums = append(nums, n)
	}
	sort.Ints(nums)
	out := make([]Conn, 0, len(nums))
	for _, n := range nums {
		out = append(out, *byNum[n])
	}
	return out
}

// Faults returns what amqpspy reported as faults in the frames and
// messages it printed ("cN > error: …"), or that it could not keep up
// (recordings marked incomplete), and how many frames it printed. Call it
// after Close.
func (s *SpyTap) Faults() (faults []string, frames int, err error) {
	f, err := os.Open(filepath.Join(s.dir, "frames.txt"))
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	frameLine := regexp.MustCompile(`^c\d+ [<>] frame \d+ at `)
	faultLine := regexp.MustCompile(`^c\d+ [<>] error: |^c\d+.* not printed`) // not "c1 >   error: …", a field
	for sc.Scan() {
		line := sc.Text()
		switch {
		case frameLine.MatchString(line):
			frames++
		case faultLine.MatchString(line):
			faults = append(faults, line)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(s.dir, "rec"))
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".incomplete") {
			faults = append(faults, "recording incomplete: "+e.Name())
		}
	}
	return faults, frames, sc.Err()
}
