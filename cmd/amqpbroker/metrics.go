package main

import (
	"strings"
	"unicode/utf8"

	"github.com/amqpsax/amqpsax/broker"
	"github.com/prometheus/client_golang/prometheus"
)

// collector reads the broker's statistics at each scrape: summed over
// the queues, or per queue (label queue) when perQueue is set. A scrape
// never panics: a metric that cannot be made is left out.
type collector struct {
	b                                                      *broker.Broker
	perQueue                                               bool
	depth, bytes, unsettled, consumers, producers, blocked *prometheus.Desc
	detached, durableLinks, queues, scheduled              *prometheus.Desc
	messages, connections, accepted                        *prometheus.Desc
}

func newCollector(b *broker.Broker, perQueue bool) *collector {
	var q []string
	if perQueue {
		q = []string{"queue"}
	}
	g := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("amqpbroker_queue_"+name, help, q, nil)
	}
	return &collector{b: b, perQueue: perQueue,
		depth:     g("depth", "Messages waiting on the queue."),
		bytes:     g("bytes", "Bytes of the messages waiting on the queue and sent unsettled."),
		unsettled: g("unsettled", "Messages sent to consumers and not settled yet."),
		consumers: g("consumers", "Consumers attached."),
		producers: g("producers", "Producers attached."),
		blocked:   g("blocked_producers", "Producers waiting for credit."),
		detached:  g("detached_consumers", "Durable subscriptions detached and kept, waiting to be attached again."),
		scheduled: g("scheduled", "Messages held until their scheduled delivery time."),
		durableLinks: prometheus.NewDesc("amqpbroker_durable_links",
			"Durable links the broker keeps state for: attached, or detached until their expiry policy ends them.", []string{"state"}, nil),
		queues:      prometheus.NewDesc("amqpbroker_queues", "Queues (nodes) the broker holds.", nil, nil),
		messages:    prometheus.NewDesc("amqpbroker_queue_messages_total", "Messages by event.", append(q, "event"), nil),
		connections: prometheus.NewDesc("amqpbroker_connections", "Connections open.", nil, nil),
		accepted:    prometheus.NewDesc("amqpbroker_connections_accepted_total", "Connections accepted.", nil, nil),
	}
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.depth, c.bytes, c.unsettled, c.consumers, c.producers, c.blocked,
		c.detached, c.scheduled, c.durableLinks, c.queues, c.messages, c.connections, c.accepted} {
		ch <- d
	}
}

// label returns s as a label value: valid UTF-8, as Prometheus wants
// (the broker keeps only UTF-8 addresses; this holds whatever it
// holds).
func label(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	send := func(d *prometheus.Desc, t prometheus.ValueType, v float64, labels ...string) {
		if m, err := prometheus.NewConstMetric(d, t, v, labels...); err == nil {
			ch <- m
		}
	}
	open, accepted := c.b.Connections()
	send(c.connections, prometheus.GaugeValue, float64(open))
	send(c.accepted, prometheus.CounterValue, float64(accepted))
	att, det := c.b.DurableLinks()
	send(c.durableLinks, prometheus.GaugeValue, float64(att), "attached")
	send(c.durableLinks, prometheus.GaugeValue, float64(det), "detached")
	qs := c.b.Queues()
	send(c.queues, prometheus.GaugeValue, float64(len(qs)))
	if !c.perQueue {
		var sum broker.QueueStats
		for _, s := range qs {
			sum.Depth += s.Depth
			sum.Bytes += s.Bytes
			sum.Unsettled += s.Unsettled
			sum.Consumers += s.Consumers
			sum.Producers += s.Producers
			sum.Blocked += s.Blocked
			sum.Detached += s.Detached
			sum.Enqueued += s.Enqueued
			sum.Delivered += s.Delivered
			sum.Accepted += s.Accepted
			sum.Rejected += s.Rejected
			sum.Released += s.Released
			sum.Modified += s.Modified
			sum.Redelivered += s.Redelivered
			sum.Dropped += s.Dropped
			sum.Refused += s.Refused
			sum.Filtered += s.Filtered
			sum.Scheduled += s.Scheduled
			sum.Expired += s.Expired
			sum.DeadLettered += s.DeadLettered
		}
		qs = []broker.QueueStats{sum}
	}
	for _, s := range qs {
		var q []string
		if c.perQueue {
			q = []string{label(s.Name)}
		}
		gauge := func(d *prometheus.Desc, v float64) { send(d, prometheus.GaugeValue, v, q...) }
		gauge(c.depth, float64(s.Depth))
		gauge(c.bytes, float64(s.Bytes))
		gauge(c.unsettled, float64(s.Unsettled))
		gauge(c.consumers, float64(s.Consumers))
		gauge(c.producers, float64(s.Producers))
		gauge(c.blocked, float64(s.Blocked))
		gauge(c.detached, float64(s.Detached))
		gauge(c.scheduled, float64(s.Scheduled))
		for _, e := range []struct {
			event string
			n     uint64
		}{{"enqueued", s.Enqueued}, {"delivered", s.Delivered}, {"accepted", s.Accepted}, {"rejected", s.Rejected},
			{"released", s.Released}, {"modified", s.Modified}, {"redelivered", s.Redelivered},
			{"dropped", s.Dropped}, {"refused", s.Refused}, {"expired", s.Expired}, {"dead_lettered", s.DeadLettered},
			{"filtered", s.Filtered}} {
			send(c.messages, prometheus.CounterValue, float64(e.n), append(q, e.event)...)
		}
	}
}
