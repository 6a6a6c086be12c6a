package main

import (
	"github.com/amqpsax/amqpsax/broker"
	"github.com/prometheus/client_golang/prometheus"
)

// collector reads the broker's statistics at each scrape.
type collector struct {
	b                                                      *broker.Broker
	depth, bytes, unsettled, consumers, producers, blocked *prometheus.Desc
	detached, durableLinks                                 *prometheus.Desc
	messages, connections, accepted                        *prometheus.Desc
}

func newCollector(b *broker.Broker) *collector {
	q := []string{"queue"}
	g := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("amqpbroker_queue_"+name, help, q, nil)
	}
	return &collector{b: b,
		depth:     g("depth", "Messages waiting on the queue."),
		bytes:     g("bytes", "Bytes of the messages waiting on the queue and sent unsettled."),
		unsettled: g("unsettled", "Messages sent to consumers and not settled yet."),
		consumers: g("consumers", "Consumers attached."),
		producers: g("producers", "Producers attached."),
		blocked:   g("blocked_producers", "Producers waiting for credit."),
		detached:  g("detached_consumers", "Durable subscriptions detached and kept, waiting to be attached again."),
		durableLinks: prometheus.NewDesc("amqpbroker_durable_links",
			"Durable links the broker keeps state for: attached, or detached until their expiry policy ends them.", []string{"state"}, nil),
		messages:    prometheus.NewDesc("amqpbroker_queue_messages_total", "Messages by event.", []string{"queue", "event"}, nil),
		connections: prometheus.NewDesc("amqpbroker_connections", "Connections open.", nil, nil),
		accepted:    prometheus.NewDesc("amqpbroker_connections_accepted_total", "Connections accepted.", nil, nil),
	}
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.depth, c.bytes, c.unsettled, c.consumers, c.producers, c.blocked,
		c.detached, c.durableLinks, c.messages, c.connections, c.accepted} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	open, accepted := c.b.Connections()
	ch <- prometheus.MustNewConstMetric(c.connections, prometheus.GaugeValue, float64(open))
	ch <- prometheus.MustNewConstMetric(c.accepted, prometheus.CounterValue, float64(accepted))
	att, det := c.b.DurableLinks()
	ch <- prometheus.MustNewConstMetric(c.durableLinks, prometheus.GaugeValue, float64(att), "attached")
	ch <- prometheus.MustNewConstMetric(c.durableLinks, prometheus.GaugeValue, float64(det), "detached")
	for _, s := range c.b.Queues() {
		gauge := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, s.Name)
		}
		gauge(c.depth, float64(s.Depth))
		gauge(c.bytes, float64(s.Bytes))
		gauge(c.unsettled, float64(s.Unsettled))
		gauge(c.consumers, float64(s.Consumers))
		gauge(c.producers, float64(s.Producers))
		gauge(c.blocked, float64(s.Blocked))
		gauge(c.detached, float64(s.Detached))
		for _, e := range []struct {
			event string
			n     uint64
		}{{"enqueued", s.Enqueued}, {"delivered", s.Delivered}, {"accepted", s.Accepted}, {"rejected", s.Rejected},
			{"released", s.Released}, {"modified", s.Modified}, {"redelivered", s.Redelivered},
			{"dropped", s.Dropped}, {"refused", s.Refused}} {
			ch <- prometheus.MustNewConstMetric(c.messages, prometheus.CounterValue, float64(e.n), s.Name, e.event)
		}
	}
}
