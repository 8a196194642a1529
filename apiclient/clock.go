package apiclient

import (
	"net/http"
	"sync/atomic"
	"time"
)

// clockSkew is the API's clock minus the exporter's, measured from the Date
// header of each answer against the middle of its request: the data plane's
// reads ask for times and read stamps in the API's clock.
type clockSkew struct {
	nanos atomic.Int64
	known atomic.Bool
	// date is the last Date parsed: answers come many a second, and one parse costs more than the rest.
	date atomic.Pointer[parsedDate]
}

type parsedDate struct {
	text string
	t    time.Time
}

// noteDate measures the skew from an answer's Date header (one-second
// precision: a skew under two seconds is none).
func (c *Client) noteDate(h http.Header, start, end time.Time) {
	text := h.Get("Date")
	last := c.skew.date.Load()
	if last == nil || last.text != text {
		t, err := http.ParseTime(text)
		if err != nil {
			return
		}
		last = &parsedDate{text, t}
		c.skew.date.Store(last)
	}
	date := last.t
	mid := start.Add(end.Sub(start) / 2)
	skew := date.Sub(mid.Truncate(time.Second)).Round(time.Second)
	if skew > -2*time.Second && skew < 2*time.Second {
		skew = 0
	}
	c.skew.nanos.Store(int64(skew))
	c.skew.known.Store(true)
}

// ClockSkew returns the API's clock minus the exporter's, as the newest
// answer's Date header tells it, and whether any answer told it.
func (c *Client) ClockSkew() (time.Duration, bool) {
	return time.Duration(c.skew.nanos.Load()), c.skew.known.Load()
}
