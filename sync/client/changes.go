package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/rerun-build/rerun-desktop/sync/protocol"
)

// Push sends changes to the workspace's change log, in batches of at most
// protocol.MaxPush changes and protocol.MaxPushBytes sealed bytes, and
// returns the newest seq after the last batch. The relay assigns each
// change's seq: a Seq set here is ignored. Each change must pass
// protocol.CheckChange (its Device is normally Config.Device); a batch the
// relay refuses stops the push (the earlier batches are stored). It is a
// plain HTTPS call: the socket need not be up.
func (c *Client) Push(ctx context.Context, changes []protocol.Change) (last int64, err error) {
	for start := 0; start < len(changes); {
		end, size := start, 0
		for end < len(changes) && end-start < protocol.MaxPush && (end == start || size+len(changes[end].Body) <= protocol.MaxPushBytes) {
			size += len(changes[end].Body)
			end++
		}
		batch := make([]protocol.Change, end-start)
		for i, ch := range changes[start:end] {
			ch.Seq = 0
			batch[i] = ch
		}
		if err := protocol.CheckPush(protocol.ChangePush{Changes: batch}); err != nil {
			return last, fmt.Errorf("push changes %d to %d: %w", start, end-1, err)
		}
		var p protocol.Pushed
		if err := c.call(ctx, http.MethodPost, protocol.PathChanges, protocol.ChangePush{Changes: batch}, &p); err != nil {
			return last, fmt.Errorf("push changes %d to %d: %w", start, end-1, err)
		}
		last, start = p.Last, end
	}
	return last, nil
}

// Pull returns up to limit changes with seq > after, ascending (limit ≤ 0:
// the relay's default, protocol.DefaultPull; at most protocol.MaxPull).
// When the page says More, pull again after its last change's seq; when it
// does not, the device has everything up to page.Last. It is a plain HTTPS
// call: the socket need not be up.
func (c *Client) Pull(ctx context.Context, after int64, limit int) (protocol.ChangePage, error) {
	q := url.Values{"after": {strconv.FormatInt(after, 10)}}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(min(limit, protocol.MaxPull)))
	}
	var page protocol.ChangePage
	if err := c.call(ctx, http.MethodGet, protocol.PathChanges+"?"+q.Encode(), nil, &page); err != nil {
		return protocol.ChangePage{}, fmt.Errorf("pull changes after %d: %w", after, err)
	}
	return page, nil
}
