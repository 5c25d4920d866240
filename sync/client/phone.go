package client

import (
	"context"
	"net/http"
	"time"

	"github.com/rerun-build/rerun-desktop/sync/protocol"
)

// AddPhonePairing registers the hash of a one-time pairing token with the
// relay, valid until expires (at most protocol.PairingTTL away). The token
// itself goes only into the link the person scans.
func (c *Client) AddPhonePairing(ctx context.Context, token string, expires time.Time) error {
	return c.call(ctx, http.MethodPost, protocol.PathPhone+"/pairings",
		protocol.PhonePairing{Hash: protocol.TokenHash(token), ExpiresAt: expires}, nil)
}

// Phones lists the workspace's paired phones.
func (c *Client) Phones(ctx context.Context) ([]protocol.Phone, error) {
	var list []protocol.Phone
	err := c.call(ctx, http.MethodGet, protocol.PathPhone+"/devices", nil, &list)
	return list, err
}

// RemovePhone forgets a phone at the relay: its secret stops working and
// it gets no more pushes. ErrNotFound when it is not paired.
func (c *Client) RemovePhone(ctx context.Context, id string) error {
	return c.call(ctx, http.MethodDelete, protocol.PathPhone+"/devices/"+id, nil, nil)
}

// PushPhones sends a sealed card to every paired phone. An error (a push
// service failed, the relay is unreachable) is worth a retry with the same
// p.ID and p.Tag: a phone shows the copy in place of the first.
func (c *Client) PushPhones(ctx context.Context, p protocol.PhonePush) (protocol.PhonePushed, error) {
	var out protocol.PhonePushed
	err := c.call(ctx, http.MethodPost, protocol.PathPhone+"/push", p, &out)
	return out, err
}
