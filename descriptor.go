package amqpsax

// Descriptor is the numeric descriptor of a described type: domain<<32 | id
// (AMQP 1.0 part 1 §1.5). The descriptors the spec defines are in the
// domain 0x00000000, so their value is just the id. A Descriptor is neither
// a Code nor a Kind: 0x70 is the header section here and a uint encoding
// there.
type Descriptor uint64

// The descriptors defined by AMQP 1.0: messaging (part 3), transport
// (part 2), transactions (part 4) and security (part 5).
const (
	// Message sections, part 3 §3.2.
	DescriptorHeader                Descriptor = 0x70
	DescriptorDeliveryAnnotations   Descriptor = 0x71
	DescriptorMessageAnnotations    Descriptor = 0x72
	DescriptorProperties            Descriptor = 0x73
	DescriptorApplicationProperties Descriptor = 0x74
	DescriptorData                  Descriptor = 0x75
	DescriptorAMQPSequence          Descriptor = 0x76
	DescriptorAMQPValue             Descriptor = 0x77
	DescriptorFooter                Descriptor = 0x78

	// Delivery states, part 3 §3.4.
	DescriptorReceived Descriptor = 0x23
	DescriptorAccepted Descriptor = 0x24
	DescriptorRejected Descriptor = 0x25
	DescriptorReleased Descriptor = 0x26
	DescriptorModified Descriptor = 0x27

	// Addressing, part 3 §3.5.
	DescriptorSource                    Descriptor = 0x28
	DescriptorTarget                    Descriptor = 0x29
	DescriptorDeleteOnClose             Descriptor = 0x2b
	DescriptorDeleteOnNoLinks           Descriptor = 0x2c
	DescriptorDeleteOnNoMessages        Descriptor = 0x2d
	DescriptorDeleteOnNoLinksOrMessages Descriptor = 0x2e

	// Performatives and error, part 2 §2.7 and §2.8.14.
	DescriptorOpen        Descriptor = 0x10
	DescriptorBegin       Descriptor = 0x11
	DescriptorAttach      Descriptor = 0x12
	DescriptorFlow        Descriptor = 0x13
	DescriptorTransfer    Descriptor = 0x14
	DescriptorDisposition Descriptor = 0x15
	DescriptorDetach      Descriptor = 0x16
	DescriptorEnd         Descriptor = 0x17
	DescriptorClose       Descriptor = 0x18
	DescriptorError       Descriptor = 0x1d

	// Transactions, part 4 §4.5.
	DescriptorCoordinator        Descriptor = 0x30
	DescriptorDeclare            Descriptor = 0x31
	DescriptorDischarge          Descriptor = 0x32
	DescriptorDeclared           Descriptor = 0x33
	DescriptorTransactionalState Descriptor = 0x34

	// SASL frames, part 5 §5.3.3.
	DescriptorSASLMechanisms Descriptor = 0x40
	DescriptorSASLInit       Descriptor = 0x41
	DescriptorSASLChallenge  Descriptor = 0x42
	DescriptorSASLResponse   Descriptor = 0x43
	DescriptorSASLOutcome    Descriptor = 0x44
)

// descriptorNames holds the symbolic descriptor of every defined
// descriptor, indexed by its numeric id (all are below 0x80).
var descriptorNames = [0x80]string{
	DescriptorHeader:                    "amqp:header:list",
	DescriptorDeliveryAnnotations:       "amqp:delivery-annotations:map",
	DescriptorMessageAnnotations:        "amqp:message-annotations:map",
	DescriptorProperties:                "amqp:properties:list",
	DescriptorApplicationProperties:     "amqp:application-properties:map",
	DescriptorData:                      "amqp:data:binary",
	DescriptorAMQPSequence:              "amqp:amqp-sequence:list",
	DescriptorAMQPValue:                 "amqp:amqp-value:*",
	DescriptorFooter:                    "amqp:footer:map",
	DescriptorReceived:                  "amqp:received:list",
	DescriptorAccepted:                  "amqp:accepted:list",
	DescriptorRejected:                  "amqp:rejected:list",
	DescriptorReleased:                  "amqp:released:list",
	DescriptorModified:                  "amqp:modified:list",
	DescriptorSource:                    "amqp:source:list",
	DescriptorTarget:                    "amqp:target:list",
	DescriptorDeleteOnClose:             "amqp:delete-on-close:list",
	DescriptorDeleteOnNoLinks:           "amqp:delete-on-no-links:list",
	DescriptorDeleteOnNoMessages:        "amqp:delete-on-no-messages:list",
	DescriptorDeleteOnNoLinksOrMessages: "amqp:delete-on-no-links-or-messages:list",
	DescriptorOpen:                      "amqp:open:list",
	DescriptorBegin:                     "amqp:begin:list",
	DescriptorAttach:                    "amqp:attach:list",
	DescriptorFlow:                      "amqp:flow:list",
	DescriptorTransfer:                  "amqp:transfer:list",
	DescriptorDisposition:               "amqp:disposition:list",
	DescriptorDetach:                    "amqp:detach:list",
	DescriptorEnd:                       "amqp:end:list",
	DescriptorClose:                     "amqp:close:list",
	DescriptorError:                     "amqp:error:list",
	DescriptorCoordinator:               "amqp:coordinator:list",
	DescriptorDeclare:                   "amqp:declare:list",
	DescriptorDischarge:                 "amqp:discharge:list",
	DescriptorDeclared:                  "amqp:declared:list",
	DescriptorTransactionalState:        "amqp:transactional-state:list",
	DescriptorSASLMechanisms:            "amqp:sasl-mechanisms:list",
	DescriptorSASLInit:                  "amqp:sasl-init:list",
	DescriptorSASLChallenge:             "amqp:sasl-challenge:list",
	DescriptorSASLResponse:              "amqp:sasl-response:list",
	DescriptorSASLOutcome:               "amqp:sasl-outcome:list",
}

// Name returns the symbolic descriptor the spec gives d ("amqp:header:list"),
// or "" when d is not one the spec defines.
func (d Descriptor) Name() string {
	if d < Descriptor(len(descriptorNames)) {
		return descriptorNames[d]
	}
	return ""
}

// TypeName returns the name of the type the spec describes with d: the
// middle part of its symbolic descriptor ("attach" for amqp:attach:list,
// "application-properties", "sasl-init"), or "" when the spec does not
// define d. It does not allocate.
func (d Descriptor) TypeName() string {
	s := d.Name()
	if s == "" {
		return ""
	}
	s = s[len("amqp:"):]
	for i := len(s) - 1; i > 0; i-- {
		if s[i] == ':' {
			return s[:i]
		}
	}
	return s
}

// String returns d's symbolic name, or its number in hex when the spec
// does not define it.
func (d Descriptor) String() string {
	if s := d.Name(); s != "" {
		return s
	}
	const hex = "0123456789abcdef"
	var b [2 + 16]byte
	i := len(b)
	for v := uint64(d); ; v >>= 4 {
		i--
		b[i] = hex[v&0xf]
		if v < 0x10 {
			break
		}
	}
	i -= 2
	b[i], b[i+1] = '0', 'x'
	return string(b[i:])
}

// LookupDescriptor returns the numeric descriptor whose symbolic name is
// name (for example "amqp:properties:list"), so that a value described by
// a symbol can be recognised like one described by a ulong. It does not
// allocate.
func LookupDescriptor(name []byte) (Descriptor, bool) {
	// Every defined name starts "amqp:" and is at most 40 bytes long.
	if len(name) < 6 || len(name) > 40 || string(name[:5]) != "amqp:" {
		return 0, false
	}
	for d, s := range descriptorNames {
		if s != "" && s == string(name) {
			return Descriptor(d), true
		}
	}
	return 0, false
}
