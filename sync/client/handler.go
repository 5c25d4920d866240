package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// HandlerDeliver returns a Deliver function that hands each delivery, in
// process, to h: the webhook call as the relay took it (method, query,
// headers, body) at path(d). h is the desktop's trigger intake taking a
// token hash, never mounted on a listening server (there the hash would be
// a credential). Its answers mean:
//
//	2xx {"run_id": …}            queued (or a duplicate of a queued one): ack
//	408, 409, 425, 429, 5xx      not now: the relay retries with backoff
//	any other 4xx                refused for good (ErrRefused): the relay drops it
//
// A call that has neither webhook-id nor Idempotency-Key gets
// Idempotency-Key: <delivery id>, so that the same delivery sent again
// starts no second run. Rerun-Relay-Delivery carries the delivery id.
func HandlerDeliver(h http.Handler, path func(Delivery) string) func(context.Context, Delivery) (string, error) {
	return func(ctx context.Context, d Delivery) (string, error) {
		target := path(d)
		if d.Query != "" {
			target += "?" + d.Query
		}
		req, err := http.NewRequestWithContext(ctx, d.Method, "http://relay.invalid"+target, bytes.NewReader(d.Body))
		if err != nil {
			return "", fmt.Errorf("%w: the call cannot be replayed: %v", ErrRefused, err)
		}
		req.Header = d.Header.Clone()
		if req.Header == nil {
			req.Header = http.Header{}
		}
		if req.Header.Get("webhook-id") == "" && req.Header.Get("Idempotency-Key") == "" {
			req.Header.Set("Idempotency-Key", d.ID)
		}
		req.Header.Set("Rerun-Relay-Delivery", d.ID)
		req.RemoteAddr = "relay"
		rec := &recorder{header: http.Header{}}
		h.ServeHTTP(rec, req)
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		var answer struct {
			RunID string `json:"run_id"`
			Error string `json:"error"`
		}
		json.Unmarshal(rec.body.Bytes(), &answer)
		msg := answer.Error
		if msg == "" {
			msg = strings.TrimSpace(rec.body.String())
		}
		switch s := rec.status; {
		case s >= 200 && s < 300:
			return answer.RunID, nil
		case s == 408 || s == 409 || s == 425 || s == 429 || s >= 500:
			return "", fmt.Errorf("the trigger answered %d: %s", s, msg)
		default:
			return "", fmt.Errorf("%w: the trigger answered %d: %s", ErrRefused, s, msg)
		}
	}
}

// recorder is the ResponseWriter h writes to.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	if r.body.Len() < 64<<10 { // answers are small; a handler gone astray is not kept
		r.body.Write(b[:min(len(b), 64<<10-r.body.Len())])
	}
	return len(b), nil
}
