package engine

import (
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHeldReturnsToZero: whatever the budget counted on a connection
// (Conn.Held: sessions, links, unsettled deliveries, a delivery half
// joined, open transactions) is given back when the connection ends —
// closed, its reading side ended (CloseRead) or failed (ReadFailed).
func TestHeldReturnsToZero(t *testing.T) {
	for _, how := range []string{"close", "closeread", "readfailed"} {
		end := func(p *pipe) {
			switch how {
			case "close":
				require.NoError(t, p.c.Close(nil))
				p.run()
			case "closeread":
				p.s.CloseRead()
			case "readfailed":
				p.s.ReadFailed(io.ErrUnexpectedEOF)
			}
		}
		t.Run(how, func(t *testing.T) {
			// A transaction open on a coordinator link.
			p, ch, _ := txnPair(t, &testCoordinator{prefix: "t", commitOK: true})
			_, err := ch.links["ctrl"].Declare()
			require.NoError(t, err)
			p.run()
			held, _ := p.s.Held()
			require.Positive(t, held)
			end(p)
			held, _ = p.s.Held()
			require.Zero(t, held, "transaction")

			// Unsettled deliveries in the server's ring, and one half
			// joined (its window lets 4 of its transfers through).
			p, _, l := openPair(t, Config{}, Config{Credit: 10, MaxFrameSize: 512, Window: 4}, LinkOptions{}, &recorder{})
			_, err = l.Send(nil, []byte("m"), false)
			require.NoError(t, err)
			p.run()
			_, err = l.Send(nil, make([]byte, 10_000), false)
			require.NoError(t, err)
			p.run()
			held, _ = p.s.Held()
			require.Greater(t, held, 4*400, "the half-joined delivery counts")
			end(p)
			held, _ = p.s.Held()
			require.Zero(t, held, "deliveries")
		})
	}
}
