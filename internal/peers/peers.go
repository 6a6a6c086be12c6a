// Package peers loads the interop corpus of testdata/peers: connections
// recorded between real clients (Azure/go-amqp, rhea, uAMQP-C, Qpid
// Proton) and real servers (RabbitMQ 3.10, Proton's engine), with the
// frame and message lists and Qpid Proton's traces that
// testdata/peers/gen.py wrote beside them. See testdata/peers/README.md.
package peers

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// Frame is one line of NAME-DIR-frames.jsonl: a protocol header or a
// frame of the stream.
type Frame struct {
	Kind         string  `json:"kind"` // "protocol-header" or "frame"
	Offset       int     `json:"offset"`
	Size         int     `json:"size"`
	Hex          string  `json:"hex"` // protocol headers only
	Doff         int     `json:"doff"`
	Type         int     `json:"type"`
	Channel      int     `json:"channel"`
	Performative *string `json:"performative"` // nil: an empty frame (heartbeat)
	Trace        *string `json:"trace"`        // Proton's trace of the performative
	Error        string  `json:"error"`        // where Proton's decoder failed
}

// Message is one line of NAME-DIR-messages.jsonl: a delivery, its
// transfer frames joined.
type Message struct {
	Name        string  `json:"name"`
	Channel     int     `json:"channel"`
	Handle      int     `json:"handle"`
	Link        string  `json:"link"`
	DeliveryID  *int    `json:"delivery_id"`
	DeliveryTag string  `json:"delivery_tag"`
	Settled     bool    `json:"settled"`
	Frames      []int   `json:"frames"` // offsets of its transfer frames
	Hex         string  `json:"hex"`
	Trace       *string `json:"trace"` // nil where Proton's decoder cannot represent it
	Error       string  `json:"error"`
	Data        []byte  `json:"-"`
}

// Stream is one direction of one recorded connection.
type Stream struct {
	Name     string // "goamqp-1-client"
	Conn     string // "goamqp-1"
	Client   string // who the connection's client is: goamqp, rhea, proton, uamqp
	Dir      string // "client" (client to server) or "server" (server to client)
	Server   string // "rabbitmq" or "proton-engine"
	Data     []byte // the raw stream
	Frames   []Frame
	Messages []Message
}

// Encoder names who wrote the stream's bytes.
func (s *Stream) Encoder() string {
	if s.Dir == "client" {
		return s.Client
	}
	return s.Server
}

// Dir returns the path of testdata/peers.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "peers")
}

// Load reads every stream of the corpus, in name order.
func Load(t testing.TB) []Stream {
	t.Helper()
	bins, err := filepath.Glob(filepath.Join(Dir(), "*.bin"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(bins)
	var out []Stream
	for _, bin := range bins {
		name := strings.TrimSuffix(filepath.Base(bin), ".bin")
		cut := strings.LastIndexByte(name, '-')
		s := Stream{Name: name, Conn: name[:cut], Dir: name[cut+1:]}
		s.Client, _, _ = strings.Cut(s.Conn, "-")
		s.Server = "rabbitmq"
		if strings.Contains(s.Conn, "protonbroker") {
			s.Server = "proton-engine"
		}
		if s.Data, err = os.ReadFile(bin); err != nil {
			t.Fatal(err)
		}
		readJSONL(t, filepath.Join(Dir(), name+"-frames.jsonl"), func(b []byte) error {
			var f Frame
			err := json.Unmarshal(b, &f)
			s.Frames = append(s.Frames, f)
			return err
		})
		readJSONL(t, filepath.Join(Dir(), name+"-messages.jsonl"), func(b []byte) error {
			var m Message
			if err := json.Unmarshal(b, &m); err != nil {
				return err
			}
			var err error
			m.Data, err = hex.DecodeString(m.Hex)
			s.Messages = append(s.Messages, m)
			return err
		})
		out = append(out, s)
	}
	if len(out) == 0 {
		t.Fatal("testdata/peers: no recorded streams")
	}
	return out
}

func readJSONL(t testing.TB, path string, line func([]byte) error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		if err := line(sc.Bytes()); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

// UAMQPMessage is one line of testdata/uamqp/messages.jsonl: a message
// written by uAMQP-C's own encoder, with Proton's trace.
type UAMQPMessage struct {
	Name     string   `json:"name"`
	Hex      string   `json:"hex"`
	Trace    string   `json:"trace"`
	Sections []string `json:"sections"`
	Data     []byte   `json:"-"`
}

// LoadUAMQP reads testdata/uamqp/messages.jsonl.
func LoadUAMQP(t testing.TB) []UAMQPMessage {
	t.Helper()
	var out []UAMQPMessage
	readJSONL(t, filepath.Join(Dir(), "..", "uamqp", "messages.jsonl"), func(b []byte) error {
		var m UAMQPMessage
		if err := json.Unmarshal(b, &m); err != nil {
			return err
		}
		var err error
		m.Data, err = hex.DecodeString(m.Hex)
		out = append(out, m)
		return err
	})
	if len(out) == 0 {
		t.Fatal("testdata/uamqp: no messages")
	}
	return out
}
