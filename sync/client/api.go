package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/rerun-build/rerun-desktop/sync/protocol"
)

// Link asks the relay at relayURL for a new workspace, with the relay's
// signup token (its operator gives it), and returns the id and secret to
// put in a Config. hc nil means http.DefaultClient.
func Link(ctx context.Context, hc *http.Client, relayURL, signupToken string) (protocol.Link, error) {
	var l protocol.Link
	err := call(ctx, hc, http.MethodPost, strings.TrimRight(relayURL, "/")+protocol.PathWorkspaces, signupToken, nil, &l)
	return l, err
}

// DeadLetters lists the workspace's deliveries that expired unacked,
// newest first (limit ≤ 0: 100).
func (c *Client) DeadLetters(ctx context.Context, limit int) ([]protocol.DeadLetter, error) {
	var list []protocol.DeadLetter
	err := c.call(ctx, http.MethodGet, protocol.PathDeadLetters+"?limit="+strconv.Itoa(limit), nil, &list)
	return list, err
}

// Replay makes a dead letter due again: it is delivered as soon as the
// client is connected. ErrNotFound when there is no such dead letter.
func (c *Client) Replay(ctx context.Context, deliveryID string) error {
	return c.call(ctx, http.MethodPost, protocol.PathDeadLetters+"/"+deliveryID+"/replay", nil, nil)
}

// DropDeadLetter deletes a dead letter from the relay.
func (c *Client) DropDeadLetter(ctx context.Context, deliveryID string) error {
	return c.call(ctx, http.MethodDelete, protocol.PathDeadLetters+"/"+deliveryID, nil, nil)
}

// Unlink makes the relay forget the workspace: its tokens, its pending
// deliveries and dead letters. The secret stops working.
func (c *Client) Unlink(ctx context.Context) error {
	return c.call(ctx, http.MethodDelete, "", nil, nil)
}

func (c *Client) putTokens(ctx context.Context, hashes []string) error {
	if hashes == nil {
		hashes = []string{}
	}
	return c.call(ctx, http.MethodPut, protocol.PathTokens, protocol.Tokens{Hashes: hashes}, nil)
}

func (c *Client) call(ctx context.Context, method, suffix string, in, out any) error {
	return call(ctx, c.cfg.HTTPClient, method, c.url(suffix), c.cfg.Secret, in, out)
}

// call makes one JSON call of the relay's API with a Bearer token and
// translates its error answers.
func call(ctx context.Context, hc *http.Client, method, url, bearer string, in, out any) error {
	if hc == nil {
		hc = http.DefaultClient
	}
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+bearer)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("relay %s %s: %w", method, req.URL.Path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 16<<20))
	if res.StatusCode >= 300 {
		var e protocol.Error
		json.Unmarshal(b, &e)
		switch res.StatusCode {
		case http.StatusUnauthorized:
			if strings.HasSuffix(req.URL.Path, protocol.PathWorkspaces) {
				return fmt.Errorf("link a workspace: %s", e.Error)
			}
			return ErrUnauthorized
		case http.StatusNotFound:
			return fmt.Errorf("relay %s %s: %w: %s", method, req.URL.Path, ErrNotFound, e.Error)
		}
		return fmt.Errorf("relay %s %s: %s: %s", method, req.URL.Path, res.Status, e.Error)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("relay %s %s: read the answer: %w", method, req.URL.Path, err)
		}
	}
	return nil
}
