package main

import "github.com/amqpsax/amqpsax"

// fieldNames names the fields of the described lists the spec defines,
// in order, so that the elements of such a list are printed with their
// names (AMQP 1.0 part 2 §2.7 performatives, §2.8.14 error; part 3 §3.2
// sections, §3.4 delivery states, §3.5 source and target; part 4 §4.5
// transactions; part 5 §5.3.3 SASL frames).
var fieldNames = map[amqpsax.Descriptor][]string{
	amqpsax.DescriptorHeader: {"durable", "priority", "ttl", "first-acquirer", "delivery-count"},
	amqpsax.DescriptorProperties: {"message-id", "user-id", "to", "subject", "reply-to",
		"correlation-id", "content-type", "content-encoding", "absolute-expiry-time",
		"creation-time", "group-id", "group-sequence", "reply-to-group-id"},

	amqpsax.DescriptorReceived: {"section-number", "section-offset"},
	amqpsax.DescriptorRejected: {"error"},
	amqpsax.DescriptorModified: {"delivery-failed", "undeliverable-here", "message-annotations"},

	amqpsax.DescriptorSource: {"address", "durable", "expiry-policy", "timeout", "dynamic",
		"dynamic-node-properties", "distribution-mode", "filter", "default-outcome",
		"outcomes", "capabilities"},
	amqpsax.DescriptorTarget: {"address", "durable", "expiry-policy", "timeout", "dynamic",
		"dynamic-node-properties", "capabilities"},

	amqpsax.DescriptorOpen: {"container-id", "hostname", "max-frame-size", "channel-max",
		"idle-time-out", "outgoing-locales", "incoming-locales", "offered-capabilities",
		"desired-capabilities", "properties"},
	amqpsax.DescriptorBegin: {"remote-channel", "next-outgoing-id", "incoming-window",
		"outgoing-window", "handle-max", "offered-capabilities", "desired-capabilities",
		"properties"},
	amqpsax.DescriptorAttach: {"name", "handle", "role", "snd-settle-mode", "rcv-settle-mode",
		"source", "target", "unsettled", "incomplete-unsettled", "initial-delivery-count",
		"max-message-size", "offered-capabilities", "desired-capabilities", "properties"},
	amqpsax.DescriptorFlow: {"next-incoming-id", "incoming-window", "next-outgoing-id",
		"outgoing-window", "handle", "delivery-count", "link-credit", "available", "drain",
		"echo", "properties"},
	amqpsax.DescriptorTransfer: {"handle", "delivery-id", "delivery-tag", "message-format",
		"settled", "more", "rcv-settle-mode", "state", "resume", "aborted", "batchable"},
	amqpsax.DescriptorDisposition: {"role", "first", "last", "settled", "state", "batchable"},
	amqpsax.DescriptorDetach:      {"handle", "closed", "error"},
	amqpsax.DescriptorEnd:         {"error"},
	amqpsax.DescriptorClose:       {"error"},
	amqpsax.DescriptorError:       {"condition", "description", "info"},

	amqpsax.DescriptorCoordinator:        {"capabilities"},
	amqpsax.DescriptorDeclare:            {"global-id"},
	amqpsax.DescriptorDischarge:          {"txn-id", "fail"},
	amqpsax.DescriptorDeclared:           {"txn-id"},
	amqpsax.DescriptorTransactionalState: {"txn-id", "outcome"},

	amqpsax.DescriptorSASLMechanisms: {"sasl-server-mechanisms"},
	amqpsax.DescriptorSASLInit:       {"mechanism", "initial-response", "hostname"},
	amqpsax.DescriptorSASLChallenge:  {"challenge"},
	amqpsax.DescriptorSASLResponse:   {"response"},
	amqpsax.DescriptorSASLOutcome:    {"code", "additional-data"},
}

// performativeNames is the short name of each frame body the spec
// defines (part 2 §2.7, part 5 §5.3.3).
var performativeNames = map[amqpsax.Descriptor]string{
	amqpsax.DescriptorOpen:           "open",
	amqpsax.DescriptorBegin:          "begin",
	amqpsax.DescriptorAttach:         "attach",
	amqpsax.DescriptorFlow:           "flow",
	amqpsax.DescriptorTransfer:       "transfer",
	amqpsax.DescriptorDisposition:    "disposition",
	amqpsax.DescriptorDetach:         "detach",
	amqpsax.DescriptorEnd:            "end",
	amqpsax.DescriptorClose:          "close",
	amqpsax.DescriptorSASLMechanisms: "sasl-mechanisms",
	amqpsax.DescriptorSASLInit:       "sasl-init",
	amqpsax.DescriptorSASLChallenge:  "sasl-challenge",
	amqpsax.DescriptorSASLResponse:   "sasl-response",
	amqpsax.DescriptorSASLOutcome:    "sasl-outcome",
}
