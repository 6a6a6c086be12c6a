package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/client"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestClientFieldsProton: package client, as go-amqp's ports use it, to a
// Qpid Proton python server (proton/client_fields_server.py) that prints
// what it read. The client opens with ConnOptions.Properties and
// capabilities, attaches a receiver with a selector
// (NewSelectorFilter), a filter of its own (NewLinkFilter, code 0: named
// by a symbol), link properties, DesiredCapabilities, source
// capabilities and a TargetAddress, and a sender with link properties,
// DesiredCapabilities, target capabilities and a SourceAddress. Proton
// prints each as the client set it; the client reads what Proton
// answered: its open's properties (Conn.Properties), each link's
// properties (Receiver.Properties, Sender.Properties) and the filters
// echoed (LinkSourceFilterValue). Proton 0.37 reads no link
// capabilities: the desired capabilities are read in the client's
// attaches as they crossed the wire (a Recorder between the two), and
// Proton attached both links.
//
//	go test -v -run TestClientFieldsProton .          (in interop/)
func TestClientFieldsProton(t *testing.T) {
	needProton(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	port := freePort(t)
	cmd := exec.CommandContext(ctx, python, "proton/client_fields_server.py", fmt.Sprint(port))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() {
		cmd.Wait()
		t.Fatalf("proton/client_fields_server.py did not start: %s", stderr.String())
	}
	require.Equal(t, fmt.Sprintf("listening on 127.0.0.1:%d", port), lines.Text())
	rec, err := NewRecorder(fmt.Sprintf("127.0.0.1:%d", port))
	require.NoError(t, err)

	c, err := client.Dial(ctx, "amqp://"+rec.Addr(), &client.ConnOptions{
		ContainerID:         "client-fields",
		Properties:          map[string]any{"product": "amqpsax-client", "x-n": int64(11)},
		OfferedCapabilities: []string{"x-client-offer"},
		DesiredCapabilities: []string{"x-client-want"},
	})
	require.NoError(t, err)
	s, err := c.NewSession(ctx, nil)
	require.NoError(t, err)
	const offsetSpec = "rabbitmq:stream-offset-spec"
	rcv, err := s.NewReceiver(ctx, "fields/q", &client.ReceiverOptions{
		Name:                "client-rcv",
		Credit:              -1,
		Properties:          map[string]any{"com.microsoft:epoch": int64(3), "rcv-prop": "r"},
		DesiredCapabilities: []string{"com.microsoft:session-filter"},
		SourceCapabilities:  []string{"queue"},
		TargetAddress:       "client-reply",
		Filters: []client.LinkFilter{
			client.NewSelectorFilter("color = 'red' AND weight > 10"),
			client.NewLinkFilter(offsetSpec, 0, int64(40)),
		},
	})
	require.NoError(t, err)
	snd, err := s.NewSender(ctx, "fields/q", &client.SenderOptions{
		Name:                "client-snd",
		Properties:          map[string]any{"snd-prop": "s"},
		DesiredCapabilities: []string{"x-want-a", "x-want-b"},
		TargetCapabilities:  []string{"topic"},
		SourceAddress:       "client-src",
	})
	require.NoError(t, err)

	// What the client reads of Proton's answers.
	assert.Equal(t, map[string]any{"product": "proton-client-fields", "x-opt-n": int64(9)}, c.Properties())
	assert.Equal(t, map[string]any{"answer": "proton-client-rcv", "x-opt-credit": int64(5)}, rcv.Properties())
	assert.Equal(t, map[string]any{"answer": "proton-client-snd", "x-opt-credit": int64(5)}, snd.Properties())
	assert.Equal(t, "color = 'red' AND weight > 10", rcv.LinkSourceFilterValue("apache.org:selector-filter:string"))
	assert.Equal(t, int64(40), rcv.LinkSourceFilterValue(offsetSpec))
	assert.Nil(t, rcv.LinkSourceFilterValue("none"))
	t.Logf("client reads Proton's open %v, links %v and %v, filters echoed %q and %v", c.Properties(), rcv.Properties(),
		snd.Properties(), rcv.LinkSourceFilterValue("apache.org:selector-filter:string"), rcv.LinkSourceFilterValue(offsetSpec))
	require.NoError(t, c.Close())

	var printed []map[string]map[string]any
	for lines.Scan() {
		var m map[string]map[string]any
		require.NoError(t, json.Unmarshal(lines.Bytes(), &m), lines.Text())
		printed = append(printed, m)
		t.Logf("proton read: %s", lines.Text())
	}
	require.NoError(t, cmd.Wait(), "proton/client_fields_server.py: %s", stderr.String())
	require.NoError(t, rec.Close())

	// What Proton read is what the client set.
	require.Len(t, printed, 3, "one open, two attaches")
	open := printed[0]["open"]
	assert.Equal(t, map[string]any{"sym:product": "str:amqpsax-client", "sym:x-n": "long:11"}, open["properties"])
	assert.Equal(t, []any{"sym:x-client-offer"}, open["offered"])
	assert.Equal(t, []any{"sym:x-client-want"}, open["desired"])
	links := map[string]map[string]any{}
	for _, p := range printed[1:] {
		links[p["attach"]["name"].(string)] = p["attach"]
	}
	r, sd := links["client-rcv"], links["client-snd"]
	require.NotNil(t, r)
	require.NotNil(t, sd)
	assert.Equal(t, false, r["sender"])
	assert.Equal(t, map[string]any{"sym:com.microsoft:epoch": "long:3", "sym:rcv-prop": "str:r"}, r["properties"])
	assert.Equal(t, map[string]any{
		"sym:apache.org:selector-filter:string": map[string]any{"descriptor": "ulong:77567109365764", "value": "str:color = 'red' AND weight > 10"},
		"sym:" + offsetSpec:                     map[string]any{"descriptor": "sym:" + offsetSpec, "value": "long:40"},
	}, r["filter"])
	assert.Equal(t, "fields/q", r["source"])
	assert.Equal(t, "client-reply", r["target"])
	assert.Equal(t, []any{"sym:queue"}, r["source_caps"])
	assert.Equal(t, true, sd["sender"])
	assert.Equal(t, map[string]any{"sym:snd-prop": "str:s"}, sd["properties"])
	assert.Equal(t, "client-src", sd["source"])
	assert.Equal(t, "fields/q", sd["target"])
	assert.Equal(t, []any{"sym:topic"}, sd["target_caps"])

	// The desired capabilities, as they crossed the wire to Proton.
	conns := rec.Conns()
	require.Len(t, conns, 1)
	_, attaches := recordedPerformatives(t, conns[0].Client)
	require.Contains(t, attaches, "client-rcv")
	require.Contains(t, attaches, "client-snd")
	assert.Equal(t, []string{"com.microsoft:session-filter"}, symbolNames(attaches["client-rcv"].DesiredCapabilities))
	assert.Equal(t, []string{"x-want-a", "x-want-b"}, symbolNames(attaches["client-snd"].DesiredCapabilities))
}
