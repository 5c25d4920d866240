// Package protocol owns what travels between the relay (package relay) and
// the desktop (package client): the HTTP paths, the JSON bodies of the
// relay's API, the frames of the delivery WebSocket, and how the workspace
// secret signs them. Both ends import it; it imports neither.
//
// # Linking a workspace
//
// POST /v1/workspaces (Authorization: Bearer <signup token>) answers a
// [Link]: a workspace id and its secret, shown once. The relay keeps two
// values derived from the secret ([Verifier] and [SigningKey]), never the
// secret. Every later call authenticates with Authorization: Bearer
// <secret> on a path under /v1/workspaces/{id}.
//
// # Webhooks
//
// A trigger's public URL is <relay>/h/<token>. The desktop PUTs the full set
// of its trigger tokens' hashes ([TokenHash], hex SHA-256, as the desktop
// stores them) to /v1/workspaces/{id}/tokens; a call to a token whose hash
// is not registered gets 404 and nothing is stored. A known token's call is
// committed as a [Delivery] before the caller gets 202.
//
// # The delivery socket
//
// The desktop keeps one WebSocket open to GET /v1/workspaces/{id}/connect.
// Each message is one [Frame] in JSON; a delivery frame is followed by a
// newline and its payload, the JSON of a [Delivery], signed the Standard
// Webhooks way (https://www.standardwebhooks.com) over
// "<id>.<timestamp>.<payload>" with the workspace's [SigningKey]. The
// desktop refuses a frame whose timestamp is more than [Tolerance] from its
// clock. The relay sends:
//
//	{"type":"hello","workspace_id":…,"time":…,"heartbeat_ms":…,"hook_base":…}
//	{"type":"delivery","id":"dlv_…","timestamp":…,"signature":"v1,…"}\n{…Delivery…}
//
// and the desktop answers each delivery with one of:
//
//	{"type":"ack","ids":["dlv_…",…]}   the runs are durably queued (or were already): forget them
//	{"type":"nack","id":"dlv_…","error":…}    not now (the app is busy, a disk error): retry later
//	{"type":"refuse","id":"dlv_…","error":…}  never (the trigger was deleted, the method is not allowed)
//
// A workspace may have several sockets, one per device:
// GET /v1/workspaces/{id}/connect?device=<device id>&hooks=1|0. Deliveries
// go to the newest socket with hooks=1 (no query: device "" and hooks=1, as
// before devices); a second socket of the same device replaces the first.
//
// Both ends ping (WebSocket ping/pong) every heartbeat. A delivery not
// acked is sent again on the next connection, or on the same one after
// the relay's ack timeout, until its retention ends; then it is a dead
// letter, listed at GET /v1/workspaces/{id}/dead-letters and sent again
// after POST /v1/workspaces/{id}/dead-letters/{delivery}/replay.
//
// # The change log
//
// The relay also carries each workspace's change log between its devices:
// records sealed end to end by the desktop with a key the relay never sees.
// It keeps only the latest [Change] of each record key, numbered by a
// per-workspace sequence (seq) it assigns in the push's transaction. A
// device POSTs a [ChangePush] to /v1/workspaces/{id}/changes and GETs a
// [ChangePage] of what is newer than its cursor. Every socket gets
//
//	{"type":"changes","last":N}
//
// right after its hello, and again whenever another device pushes: a
// device whose cursor is below N pulls.
package protocol

import (
	"net/http"
	"time"
)

// Paths of the relay. The {id} is the workspace id.
const (
	PathHooks       = "/h/"            // + trigger token: the public webhook URL
	PathWorkspaces  = "/v1/workspaces" // POST: link a new workspace
	PathTokens      = "/tokens"        // PUT under /v1/workspaces/{id}: the token hashes
	PathConnect     = "/connect"       // GET under /v1/workspaces/{id}: the delivery WebSocket
	PathDeadLetters = "/dead-letters"  // GET under /v1/workspaces/{id}; /{delivery}/replay, DELETE /{delivery}
	PathHealth      = "/healthz"       // 200 "ok" when the store answers
	PathMetrics     = "/metrics"       // Prometheus text format
)

// Defaults both ends agree on.
const (
	// MaxBody is the largest webhook body the relay takes (413 above it).
	MaxBody = 1 << 20
	// Tolerance is how far a delivery frame's timestamp may be from the
	// receiver's clock.
	Tolerance = 5 * time.Minute
	// Retention is how long an unacked delivery is retried before it
	// becomes a dead letter, and how long the desktop remembers the ids it
	// has seen.
	Retention = 7 * 24 * time.Hour
	// MaxFrame bounds one WebSocket message: a delivery with a full body
	// (base64 grows it by a third) and its headers.
	MaxFrame = 2*MaxBody + 256<<10
	// MaxTokens bounds the token hashes one workspace registers.
	MaxTokens = 10000
)

// WorkspacePath is the path of workspace id's API; suffix is one of the
// Path* constants that live under it (or "").
func WorkspacePath(id, suffix string) string { return PathWorkspaces + "/" + id + suffix }

// Link is the answer to POST /v1/workspaces: what the desktop keeps to use
// the relay. Secret is shown only here.
type Link struct {
	WorkspaceID string `json:"workspace_id"`
	Secret      string `json:"secret"`
	// HookBase + token is a trigger's public URL.
	HookBase string `json:"hook_base"`
}

// Tokens is the body of PUT /v1/workspaces/{id}/tokens: the full set of the
// workspace's trigger token hashes; it replaces the previous set.
type Tokens struct {
	Hashes []string `json:"hashes"`
}

// Accepted is the relay's 202 answer to a webhook.
type Accepted struct {
	DeliveryID string `json:"delivery_id"`
}

// Error is the body of every error answer.
type Error struct {
	Error string `json:"error"`
}

// Delivery is one webhook call the relay took for a workspace: the payload
// of a delivery frame.
type Delivery struct {
	ID string `json:"id"`
	// TokenHash is the hex SHA-256 of the trigger token the call used: the
	// relay keeps no token, and the desktop finds its trigger by this hash.
	TokenHash  string      `json:"token_hash"`
	ReceivedAt time.Time   `json:"received_at"`
	Method     string      `json:"method"`
	Query      string      `json:"query,omitempty"` // raw, without "?"
	Header     http.Header `json:"header"`          // hop-by-hop headers, Host and Cookie removed
	Body       []byte      `json:"body"`
	// Attempt counts the earlier deliveries that were nacked (0 the first
	// time).
	Attempt int `json:"attempt"`
}

// DeadLetter is a delivery whose retention ended before the desktop acked
// it, as GET /v1/workspaces/{id}/dead-letters lists it (newest first).
type DeadLetter struct {
	ID         string    `json:"id"`
	TokenHash  string    `json:"token_hash"`
	ReceivedAt time.Time `json:"received_at"`
	Method     string    `json:"method"`
	Size       int       `json:"size"` // body bytes
	Attempts   int       `json:"attempts"`
	LastError  string    `json:"last_error"` // the desktop's last nack, if any
	DeadAt     time.Time `json:"dead_at"`
}

// Frame types.
const (
	TypeHello    = "hello"
	TypeDelivery = "delivery"
	TypeAck      = "ack"
	TypeNack     = "nack"
	TypeRefuse   = "refuse"
	TypeChanges  = "changes" // relay → desktop: the change log grew to Last
)

// Frame is one WebSocket message's JSON head. Which fields are set depends
// on Type (see the package doc).
type Frame struct {
	Type string `json:"type"`

	// hello
	WorkspaceID string `json:"workspace_id,omitempty"`
	Time        int64  `json:"time,omitempty"`         // the relay's clock, Unix ms
	HeartbeatMS int64  `json:"heartbeat_ms,omitempty"` // how often each end pings
	HookBase    string `json:"hook_base,omitempty"`

	// delivery (Standard Webhooks' webhook-id, -timestamp, -signature),
	// nack and refuse (ID)
	ID        string `json:"id,omitempty"`
	Timestamp int64  `json:"timestamp,omitempty"` // Unix seconds
	Signature string `json:"signature,omitempty"`

	// ack
	IDs []string `json:"ids,omitempty"`

	// changes: the workspace's newest seq
	Last int64 `json:"last,omitempty"`

	// nack, refuse: why, for the dead-letter list and the relay's log
	Error string `json:"error,omitempty"`
}
