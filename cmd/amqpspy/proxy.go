package main

import (
	"cmp"
	"errors"
	"io"
	"math"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/amqpsax/amqpsax/cmd/internal/dump"
)

// This file is the proxy: spy (accept, one goroutine pair per
// connection, forwarding first with pump), then the printer (print, which
// takes what the forwarding queued and feeds a dump.Stream), queue (the
// bounded, paced hand-off between them: forwarding never waits on it),
// and recorder (-record's raw streams and pcaps).

// spy is the proxy: it accepts connections and serves each one.
type spy struct {
	target  string        // address to connect each client to
	out     *lockedWriter // where frames and connections are printed
	quiet   bool          // print only the lines about connections
	json    bool
	offsets bool
	record  string // directory for each connection's two byte streams; "" for none
	buffer  int    // bytes a connection may hold for printing (and for recording)
	// maxFrame bounds the frames decoded (larger ones are skipped); 0:
	// defaultMaxFrame.
	maxFrame uint32
	plain    bool
	time     int // dump.Options.Time
	summary  bool
	// showSecrets prints and records SASL secrets as they are
	// (dump.Options.ShowSecrets); by default they are masked.
	showSecrets bool
	filter      *dump.Filter
	// dial connects to the target; net.Dialer.Dial by default (tests
	// replace it).
	dial func(network, addr string) (net.Conn, error)

	mu     sync.Mutex
	next   int
	active map[int]*conns
	wg     sync.WaitGroup
}

// defaultMaxFrame is the default of -max-frame: above what brokers
// negotiate, and a bound on the memory a connection's printer holds for a
// frame (with the Assembler's 64 MiB for a message and -buffer).
const defaultMaxFrame = 64 << 20

// conns are the two ends of one proxied connection.
type conns struct{ client, server net.Conn }

// lockedWriter serialises the writes of all connections: each Write is
// whole lines (dump.Out writes complete lines), so connections never mix
// inside a line.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// serve accepts connections on ln until it is closed, at most max of them
// when max > 0, and serves each; it returns when all have ended.
func (s *spy) serve(ln net.Listener, max int) error {
	var err error
	for n := 0; max <= 0 || n < max; n++ {
		var c net.Conn
		if c, err = ln.Accept(); err != nil {
			if errors.Is(err, net.ErrClosed) {
				err = nil
			}
			break
		}
		s.mu.Lock()
		s.next++
		id := s.next
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.handle(id, c)
		}()
	}
	s.wg.Wait()
	return err
}

// closeAll closes every connection being proxied (on a signal): their
// handlers then end as if the peers had closed them.
func (s *spy) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.active {
		c.client.Close()
		c.server.Close()
	}
}

// Directions of a connection.
const (
	fromClient = 0
	fromServer = 1
)

var sides = [2]string{"client", "server"}

// handle proxies one connection: it connects to the target, forwards
// bytes both ways, and prints (and records) them from copies, off the
// forwarding path.
func (s *spy) handle(id int, client net.Conn) {
	defer client.Close()
	cid := "c" + strconv.Itoa(id)
	out := dump.NewOut(s.out)
	out.Offsets, out.Width = s.offsets, 6
	note := func(text, jsonMembers string) {
		if s.json {
			out.Object(`"conn":` + strconv.Itoa(id) + "," + jsonMembers)
		} else {
			out.Note(cid + ": " + text)
		}
		out.Flush()
	}
	dial := s.dial
	if dial == nil {
		d := net.Dialer{Timeout: 10 * time.Second}
		dial = d.Dial
	}
	server, err := dial("tcp", s.target)
	if err != nil {
		note("client "+client.RemoteAddr().String()+": cannot connect to "+s.target+": "+err.Error(),
			`"client":`+quote(client.RemoteAddr().String())+`,"error":`+quote(err.Error()))
		return
	}
	defer server.Close()
	s.mu.Lock()
	if s.active == nil {
		s.active = map[int]*conns{}
	}
	s.active[id] = &conns{client, server}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.active, id)
		s.mu.Unlock()
	}()
	// The printer and the recorder each read from a queue of copies,
	// bounded: when one falls behind, what does not fit is not queued
	// (and it says so), so forwarding never waits for either. Even the
	// lines about the connection are written by the printer's goroutine.
	var done sync.WaitGroup
	var printQ, recQ *queue
	var printLost [2]int64
	notes := []string{"client " + client.RemoteAddr().String() + ", server " + server.RemoteAddr().String(),
		`"client":` + quote(client.RemoteAddr().String()) + `,"server":` + quote(server.RemoteAddr().String())}
	var rec *recorder
	if s.record != "" {
		if rec, err = newRecorder(s.record, id, client.RemoteAddr(), server.RemoteAddr(), time.Now(), s.showSecrets); err != nil {
			notes = append(notes, "cannot record: "+err.Error(), `"error":`+quote("cannot record: "+err.Error()))
		} else {
			recQ = newQueue(s.buffer)
			done.Add(1)
			go func() {
				defer done.Done()
				rec.run(recQ)
			}()
		}
	}
	if !s.quiet {
		printQ = newQueue(s.buffer)
		printQ.waitPause = true
	}
	done.Add(1)
	go func() {
		defer done.Done()
		for i := 0; i < len(notes); i += 2 {
			note(notes[i], notes[i+1])
		}
		if printQ != nil {
			printLost = s.print(id, out, printQ)
		}
	}()

	var fwd sync.WaitGroup
	var n [2]int64
	fwd.Add(2)
	go func() {
		defer fwd.Done()
		n[fromClient] = pump(client, server, fromClient, printQ, recQ)
	}()
	go func() {
		defer fwd.Done()
		n[fromServer] = pump(server, client, fromServer, printQ, recQ)
	}()
	fwd.Wait()
	client.Close()
	server.Close()
	printQ.close()
	recQ.close()
	done.Wait()

	counts := strconv.FormatInt(n[fromClient], 10) + " bytes from the client, " + strconv.FormatInt(n[fromServer], 10) + " from the server"
	members := `"closed":true,"client-bytes":` + strconv.FormatInt(n[fromClient], 10) + `,"server-bytes":` + strconv.FormatInt(n[fromServer], 10)
	if printLost != [2]int64{} {
		counts += "; the printer fell behind: " + strconv.FormatInt(printLost[fromClient], 10) + " bytes from the client and " +
			strconv.FormatInt(printLost[fromServer], 10) + " from the server were forwarded but not printed"
		members += `,"not-printed":[` + strconv.FormatInt(printLost[fromClient], 10) + "," + strconv.FormatInt(printLost[fromServer], 10) + "]"
	}
	if rec != nil {
		files, err := rec.close()
		switch {
		case err != nil:
			counts += "; recording failed: " + err.Error()
			members += `,"record-error":` + quote(err.Error())
		default:
			counts += "; recorded in " + strings.Join(files[:], " and ")
			members += `,"recorded":[` + quote(files[0]) + "," + quote(files[1]) + "]"
		}
	}
	note("closed: "+counts, members)
}

// quote returns s as a JSON string.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[r>>4])
			b.WriteByte("0123456789abcdef"[r&15])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// pump forwards what src sends to dst until src ends, and returns how
// many bytes it forwarded. Each chunk is stamped with the time it was read
// and forwarded first; then a copy is queued for the printer and the
// recorder, never waiting: the queues put the chunks of both directions
// back in the order they were read (see queue). When src ends, dst's
// write side is closed (half-close), so dst sees the end too while the
// other direction goes on.
func pump(src, dst net.Conn, dir int, printQ, recQ *queue) int64 {
	buf := make([]byte, 32<<10)
	var total int64
	for {
		n, err := src.Read(buf)
		if n > 0 {
			t := time.Now()
			ps, rs := printQ.read(dir), recQ.read(dir)
			_, werr := dst.Write(buf[:n])
			printQ.push(dir, ps, t, buf[:n])
			recQ.push(dir, rs, t, buf[:n])
			if werr != nil {
				src.Close()
				dst.Close()
				return total
			}
			total += int64(n)
		}
		if err != nil {
			if tc, ok := dst.(interface{ CloseWrite() error }); ok && errors.Is(err, io.EOF) {
				tc.CloseWrite()
			} else {
				dst.Close()
			}
			return total
		}
	}
}

// print decodes and prints the chunks of one connection as they come,
// each direction through its own dump.Stream, and returns the bytes of
// each direction it could not print because it fell behind.
func (s *spy) print(id int, out *dump.Out, q *queue) (lost [2]int64) {
	var streams [2]*dump.Stream
	conn := dump.NewConn()
	for dir, mark := range [2]string{" > ", " < "} {
		o := dump.Options{
			Conn:         conn,
			Dir:          dir,
			Time:         s.time,
			Filter:       s.filter,
			Plain:        s.plain,
			JSON:         s.json,
			MaxFrameSize: cmp.Or(s.maxFrame, defaultMaxFrame),
			Prefix:       "c" + strconv.Itoa(id) + mark,
			Tag:          `"conn":` + strconv.Itoa(id) + `,"from":"` + sides[dir] + `",`,
			ShowSecrets:  s.showSecrets,
		}
		if !s.json {
			o.OnFault = func(err error) {
				out.Note("error: " + strings.TrimPrefix(dump.OneLine(err), "amqpdump: ")) // a peer's text in it stays on the line
			}
		}
		if s.summary {
			o.Filter = &dump.Filter{Only: []string{}} // the summary only
		}
		streams[dir] = dump.NewStream(out, o)
	}
	var stopped [2]bool
	for {
		items, qlost, closed := q.take()
		start := time.Now()
		for _, it := range items {
			streams[it.dir].WriteAt(it.b, it.t)
			q.release(len(it.b))
		}
		for dir := range 2 {
			if qlost[dir] > 0 && !stopped[dir] {
				stopped[dir] = true
				streams[dir].Stop("the printer fell behind (more than " + strconv.Itoa(q.max) +
					" bytes waiting): the rest of this direction is forwarded but not printed")
			}
		}
		out.Flush()
		q.worked(time.Since(start))
		if closed && len(items) == 0 {
			streams[fromClient].Close()
			streams[fromServer].Close()
			if s.summary {
				conn.Summary(out, s.json, `"conn":`+strconv.Itoa(id)+",", "c"+strconv.Itoa(id))
			}
			out.Flush()
			return qlost
		}
	}
}

// queue hands chunks of bytes from the forwarding goroutines to one
// consumer, holding at most max bytes: a push that does not fit is
// dropped and counted, and so is everything of that direction after it
// (a byte stream with a hole cannot be split into frames).
//
// A chunk is numbered when it is read (read), before it is forwarded, and
// queued after (push), so that forwarding does not wait for the copy. The
// consumer gets the chunks in the order they were read: a chunk is handed
// out only once the other direction has no chunk read before it still to
// be pushed.
type queue struct {
	mu       sync.Mutex
	items    []chunk // pushed, not yet taken
	size     int
	max      int
	lost     [2]int64
	seen     [2]int64 // lost, as take last returned it
	next     uint64
	inflight [2]uint64 // the number of a chunk read and not yet pushed; noChunk when none
	closed   bool
	wake     chan struct{}
	idle     time.Duration // the consumer's current polling interval
	// slab is where the copies of chunks are made, one after the other: an
	// allocation for every slabSize bytes rather than for every chunk (a
	// slab is freed once none of its chunks is queued)
	slab []byte
	last time.Time // when the last chunk queued was read
	// waitPause: chunks are handed out in the pauses of the traffic (see take)
	waitPause bool
	debt      time.Duration // the rest the consumer owes before it takes more
}

// slabSize is the size of the slabs chunks are copied into.
const slabSize = 256 << 10

// noChunk marks a direction with no chunk between read and push.
const noChunk = math.MaxUint64

type chunk struct {
	dir int
	seq uint64
	t   time.Time
	b   []byte
}

func newQueue(max int) *queue {
	return &queue{max: max, wake: make(chan struct{}, 1), inflight: [2]uint64{noChunk, noChunk}}
}

// read numbers a chunk of direction dir that has just been read.
func (q *queue) read(dir int) uint64 {
	if q == nil {
		return 0
	}
	q.mu.Lock()
	seq := q.next
	q.next++
	q.inflight[dir] = seq
	q.mu.Unlock()
	return seq
}

// push queues a copy of b, read at time t and numbered seq, unless it
// does not fit. It never waits.
func (q *queue) push(dir int, seq uint64, t time.Time, b []byte) {
	if q == nil {
		return
	}
	q.mu.Lock()
	q.inflight[dir] = noChunk
	wake := false
	if q.lost[dir] > 0 || q.size+len(b) > q.max {
		wake = q.lost[dir] == 0
		q.lost[dir] += int64(len(b))
	} else {
		if cap(q.slab)-len(q.slab) < len(b) {
			q.slab = make([]byte, 0, max(slabSize, len(b)))
		}
		start := len(q.slab)
		q.slab = append(q.slab, b...)
		q.items = append(q.items, chunk{dir, seq, t, q.slab[start:len(q.slab):len(q.slab)]})
		q.last = t
		wake = q.size < q.max/2 && q.size+len(b) >= q.max/2
		q.size += len(b)
	}
	q.mu.Unlock()
	if wake {
		// Half full (or a first loss): the consumer is woken at once
		// rather than at its next poll.
		q.signal()
	}
}

func (q *queue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// close tells the consumer that nothing more will come.
func (q *queue) close() {
	if q == nil {
		return
	}
	q.mu.Lock()
	q.closed = true
	q.inflight = [2]uint64{noChunk, noChunk}
	q.mu.Unlock()
	q.signal()
}

// take waits for chunks, a new loss or the end, and returns the chunks
// that may be handed out, in the order they were read, the bytes lost so
// far, and whether the queue is closed and empty.
func (q *queue) take() ([]chunk, [2]int64, bool) {
	if q.debt > 0 {
		// Paced: the consumer rests nine times as long as it worked.
		time.Sleep(q.debt)
		q.debt = 0
	}
	for {
		q.mu.Lock()
		slices.SortFunc(q.items, func(a, b chunk) int { return cmp.Compare(a.seq, b.seq) })
		limit := min(q.inflight[0], q.inflight[1])
		if q.waitPause && !q.closed && len(q.items) > 0 && q.size < q.max/2 &&
			time.Since(q.last) < quiet && time.Since(q.items[0].t) < maxLag {
			// Traffic is flowing: its chunks wait for a pause (or until
			// the oldest has waited maxLag, or the queue is half full),
			// so that the consumer's work falls between bursts rather
			// than in them.
			limit, q.idle = 0, 0
		}
		n, size := 0, 0
		for n < len(q.items) && q.items[n].seq < limit && (n == 0 || size+len(q.items[n].b) <= maxBatch) {
			size += len(q.items[n].b)
			n++
		}
		items := slices.Clone(q.items[:n])
		q.items = append(q.items[:0], q.items[n:]...)
		lost, closed := q.lost, q.closed && len(q.items) == 0
		seen := q.seen
		q.seen = lost
		q.mu.Unlock()
		if len(items) > 0 || closed || lost != seen {
			q.idle = 0
			return items, lost, closed
		}
		// Poll: forwarding does not wake the consumer for each chunk (a
		// wake-up on the forwarding path costs more than the forwarding),
		// it looks every pollMin while chunks come, backing off to
		// pollMax when none do; push wakes it when the queue is half full.
		q.idle = min(max(2*q.idle, pollMin), pollMax)
		t := time.NewTimer(q.idle)
		select {
		case <-q.wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// worked tells the queue that its consumer spent d on what it took last:
// while chunks are left waiting, the consumer then rests for nine times
// d before it takes more, so that it uses at most a tenth of a core.
// Printing is then spread over the idle time after a burst; a backlog
// that grows past the queue's bytes is dropped (and counted).
func (q *queue) worked(d time.Duration) {
	q.mu.Lock()
	backlog := len(q.items) > 0 && !q.closed // once closed, the rest goes at full speed
	q.mu.Unlock()
	if backlog {
		q.debt = min(9*d, maxRest)
	}
}

// maxBatch bounds the bytes take hands out at once, so that a batch's
// work, and the rest it earns, stay short.
const maxBatch = 256 << 10

// maxRest bounds a consumer's rest.
const maxRest = 100 * time.Millisecond

// The printer's chunks wait for a pause of quiet in the traffic, at most
// maxLag (see take).
const (
	quiet  = 2 * time.Millisecond
	maxLag = 100 * time.Millisecond
)

// The consumer's polling interval, while chunks come and when none do.
const (
	pollMin = 2 * time.Millisecond
	pollMax = 100 * time.Millisecond
)

// release returns n bytes of the budget, once a chunk taken is done with.
func (q *queue) release(n int) {
	q.mu.Lock()
	q.size -= n
	q.mu.Unlock()
}

// recorder writes the two byte streams of a connection to files
// conn-<id>-client.bin and conn-<id>-server.bin, and both, with the time
// each chunk was read, as a packet capture conn-<id>.pcap (pcap.go).
type recorder struct {
	files [2]*os.File
	pcap  *pcapWriter
	err   error
	// mask masks the SASL secrets of each direction (nil with
	// -show-secrets): see masker
	mask [2]*masker
}

func newRecorder(dir string, id int, client, server net.Addr, t time.Time, showSecrets bool) (*recorder, error) {
	r := &recorder{}
	if !showSecrets {
		r.mask = [2]*masker{{}, {}}
	}
	for i, side := range sides {
		f, err := os.Create(filepath.Join(dir, "conn-"+strconv.Itoa(id)+"-"+side+".bin"))
		if err != nil {
			if i == 1 {
				r.files[0].Close()
			}
			return nil, err
		}
		r.files[i] = f
	}
	p, err := newPcapWriter(filepath.Join(dir, "conn-"+strconv.Itoa(id)+".pcap"), client, server, t)
	if err != nil {
		r.files[0].Close()
		r.files[1].Close()
		return nil, err
	}
	r.pcap = p
	return r, nil
}

// run writes the chunks of q to the files until q is closed.
func (r *recorder) run(q *queue) {
	for {
		items, lost, closed := q.take()
		for _, it := range items {
			n := len(it.b)
			b := it.b
			if r.mask[it.dir] != nil {
				b = r.mask[it.dir].write(b)
			}
			r.write(it.dir, b, it.t)
			q.release(n)
		}
		if lost != [2]int64{} && r.err == nil {
			r.err = errors.New("the disk fell behind (more than " + strconv.Itoa(q.max) + " bytes waiting): the recording is incomplete")
		}
		if closed && len(items) == 0 {
			for dir, m := range r.mask {
				if m != nil {
					r.write(dir, m.flush(), time.Now())
				}
			}
			return
		}
	}
}

// write records b, bytes of direction dir read at t, unless recording
// has failed.
func (r *recorder) write(dir int, b []byte, t time.Time) {
	if r.err != nil || len(b) == 0 {
		return
	}
	if _, err := r.files[dir].Write(b); err != nil {
		r.err = err
	} else if err := r.pcap.data(dir, b, t); err != nil {
		r.err = err
	}
}

// close closes the files and returns the names of the two streams'. When
// the recording is incomplete, they are renamed with ".incomplete" added,
// so that no one takes them for a whole connection.
func (r *recorder) close() ([2]string, error) {
	var names [2]string
	for i, f := range r.files {
		names[i] = f.Name()
		if err := f.Close(); err != nil && r.err == nil {
			r.err = err
		}
	}
	pname := r.pcap.name
	if err := r.pcap.close(time.Now()); err != nil && r.err == nil {
		r.err = err
	}
	if r.err != nil {
		for i := range names {
			os.Rename(names[i], names[i]+".incomplete")
			names[i] += ".incomplete"
		}
		os.Rename(pname, pname+".incomplete")
	}
	return names, r.err
}
