package dump

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
)

// ParseTime parses -time: "", "abs", "rel", "abs,rel" (or "both").
func ParseTime(v string) (int, error) {
	m := 0
	if v == "" {
		return 0, nil
	}
	for part := range strings.SplitSeq(v, ",") {
		switch part {
		case "abs":
			m |= TimeAbs
		case "rel":
			m |= TimeRel
		case "both":
			m |= TimeAbs | TimeRel
		default:
			return 0, fmt.Errorf("-time %s: want abs, rel or abs,rel", v)
		}
	}
	return m, nil
}

// FilterFlags defines the flags of a Filter on fs; set reports
// whether any was given.
func FilterFlags(fs *flag.FlagSet) (f *Filter, set *bool) {
	f, set = &Filter{}, new(bool)
	number := func(name, usage string, v *uint32, has *bool, bits int) {
		fs.Func(name, usage, func(s string) error {
			n, err := strconv.ParseUint(s, 0, bits)
			if err != nil {
				return err
			}
			*v, *has, *set = uint32(n), true, true
			return nil
		})
	}
	var channel uint32
	fs.Func("only", "print only these frames: performatives (transfer,disposition), header, heartbeat", func(s string) error {
		only, err := ParseOnly(s)
		f.Only, *set = only, true
		return err
	})
	fs.Func("channel", "print only the frames on this channel", func(s string) error {
		n, err := strconv.ParseUint(s, 0, 16)
		channel, f.HasChannel, *set = uint32(n), true, true
		f.Channel = uint16(channel)
		return err
	})
	number("handle", "print only the frames of the links with this handle", &f.Handle, &f.HasHandle, 32)
	fs.Func("link", "print only the frames of the links with this name", func(s string) error {
		f.Link, f.HasLink, *set = s, true, true
		return nil
	})
	number("delivery", "print only the transfers and dispositions of this delivery id", &f.Delivery, &f.HasDelivery, 32)
	return f, set
}
