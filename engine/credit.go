package engine

// Creditor is a receiver's credit policy (part 2 §2.6.7): how much credit
// to keep granted, and when to grant it again. The engine keeps a link's
// credit by it (Link.SetCreditor; Link.KeepCredit, LinkOptions.Credit
// and Config.Credit keep Credit topped up at half), and a layer above
// that grants credit itself (a client's prefetch) decides by Grant, so
// that the rule is written once.
type Creditor struct {
	// Credit is the credit kept granted: each grant brings link-credit
	// back to Credit less the deliveries the application holds. 0 grants
	// none.
	Credit uint32
	// WhenDrained grants again only once all the credit granted has been
	// used (link-credit 0), and then only when at least half of Credit
	// is wanted. No flow then crosses a transfer in flight: a peer that
	// counts credit wrongly when a flow tops it up while transfers are
	// under way (RabbitMQ 3.10 sends beyond it, and the engine detaches
	// with amqp:link:transfer-limit-exceeded) is never given the chance.
	// It costs a round trip per grant. Without it, credit is topped up
	// once half is used, by at least a quarter of Credit (no flow for
	// a delivery or two while the application holds the rest).
	WhenDrained bool
}

// Grant returns the link-credit to grant now on a receiver whose
// link-credit is credit and whose application holds held deliveries it
// has not consumed yet (a prefetch buffer; 0 when none), or 0 for no
// grant now.
func (k Creditor) Grant(credit, held uint32) uint32 {
	if held >= k.Credit {
		return 0
	}
	want := k.Credit - held
	if k.WhenDrained {
		if credit == 0 && want >= (k.Credit+1)/2 {
			return want
		}
		return 0
	}
	if credit <= k.Credit/2 && want >= credit+(k.Credit+3)/4 {
		return want
	}
	return 0
}

// SetCreditor sets the receiver's credit policy and grants what it asks
// for now: from here on the engine grants credit by k after each
// delivery. Creditor{} stops the grants, leaving the credit granted.
func (l *Link) SetCreditor(k Creditor) error {
	if l.sender || !l.usable() {
		return ErrState
	}
	l.autoCredit, l.creditDrained = k.Credit, k.WhenDrained
	if n := k.Grant(l.credit, 0); n > 0 {
		return l.Flow(n)
	}
	return nil
}

// Creditor returns the receiver's credit policy.
func (l *Link) Creditor() Creditor { return Creditor{l.autoCredit, l.creditDrained} }
