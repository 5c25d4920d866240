package outbox

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/rerun-build/rerun-desktop/sync/protocol"
)

// EventType is the type of a json hook's payload.
const EventType = "notification.created"

// Payload is what a json hook receives (the Standard Webhooks shape: type,
// timestamp, data).
type Payload struct {
	Type      string    `json:"type"`
	Timestamp time.Time `json:"timestamp"`
	Data      Message   `json:"data"`
}

// Limits of the chat services: longer text is cut.
const (
	slackMax   = 3000
	discordMax = 2000
)

// Body is the request a hook of flavour f receives for m: its content type,
// body and extra headers. A json hook's body is the Payload; its signature
// headers are added by post.
func Body(flavour string, m Message) (contentType string, body []byte, headers map[string]string) {
	switch flavour {
	case Slack:
		b, _ := json.Marshal(map[string]string{"text": cut(chatText(m, "<%s|Open in Rerun>"), slackMax)})
		return "application/json", b, nil
	case Discord:
		b, _ := json.Marshal(map[string]any{
			"content":          cut(chatText(m, "[Open in Rerun](<%s>)"), discordMax),
			"allowed_mentions": map[string]any{"parse": []string{}}, // an agent's text never pings anyone
		})
		return "application/json", b, nil
	case Ntfy:
		h := map[string]string{"Title": headerSafe(m.Agent + ": " + m.Title), "Tags": "robot"}
		if m.Link != "" {
			h["Click"] = m.Link
		}
		if !m.Automated || m.Kind == "progress" || m.Kind == "info" || m.Kind == "done" {
			h["Priority"] = "default"
		} else {
			h["Priority"] = "high"
		}
		text := m.Text()
		return "text/plain; charset=utf-8", []byte(text), h
	default:
		b, _ := json.Marshal(Payload{Type: EventType, Timestamp: m.CreatedAt.UTC(), Data: m})
		return "application/json", b, nil
	}
}

// chatText is the message for a chat service, link written with linkFmt.
func chatText(m Message, linkFmt string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%s*: %s", m.Agent, m.Title)
	if m.Body != "" {
		fmt.Fprintf(&b, "\n%s", m.Body)
	}
	for i, q := range m.Questions {
		fmt.Fprintf(&b, "\n%d. %s", i+1, q.Question)
		if len(q.Options) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(q.Options, " / "))
		}
	}
	for i, it := range m.Items {
		fmt.Fprintf(&b, "\n%d. %s", i+1, it.Title)
		if it.Detail != "" {
			fmt.Fprintf(&b, "\n```\n%s\n```", cut(it.Detail, 500))
		}
	}
	if m.Link != "" {
		b.WriteString("\n" + fmt.Sprintf(linkFmt, m.Link))
	}
	return b.String()
}

// headerSafe makes s one header line.
func headerSafe(s string) string {
	return cut(strings.Join(strings.Fields(s), " "), 250)
}

// SigningKey is the key of a json hook from its secret's value: a value
// written whsec_<base64> is decoded (the Standard Webhooks form), any other
// is used as it is.
func SigningKey(secret string) []byte {
	if rest, ok := strings.CutPrefix(secret, "whsec_"); ok {
		if key, err := base64.StdEncoding.DecodeString(rest); err == nil {
			return key
		}
	}
	return []byte(secret)
}

// post sends m to hook h with send id id (the webhook-id of a json hook).
func (s *Service) post(ctx context.Context, h Hook, id string, m Message) error {
	target, err := s.d.Vars.Resolve(h.URL)
	if err != nil {
		return fmt.Errorf("hook %s URL: %w", h.Name, err)
	}
	ctype, body, headers := Body(h.Flavour, m)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return &permanent{fmt.Errorf("hook %s URL: %w", h.Name, err)}
	}
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("User-Agent", "Rerun")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	if h.Flavour == JSON {
		secret, err := s.d.Vars.Resolve(h.Secret)
		if err != nil {
			return fmt.Errorf("hook %s signing secret: %w", h.Name, err)
		}
		ts := s.now().Unix()
		req.Header.Set("webhook-id", id)
		req.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
		req.Header.Set("webhook-signature", protocol.Sign(SigningKey(secret), id, ts, body))
	}
	res, err := s.http.Do(req)
	if err != nil {
		// The error names the URL, whose resolved secrets the caller masks.
		return fmt.Errorf("hook %s: %w", h.Name, err)
	}
	defer res.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(res.Body, 500))
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("hook %s answered %s: %s", h.Name, res.Status, strings.TrimSpace(string(answer)))
	}
	return nil
}

// TestHook posts a test notification to h (checked first) now and returns
// the answer when it fails.
func (s *Service) TestHook(ctx context.Context, h Hook) error {
	if err := h.Check(s.d.Vars.Has); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, s.c.Timeout)
	defer cancel()
	m := Message{Workspace: s.d.Workspace, Kind: "test", Agent: "Rerun", Title: "Test notification",
		Body: "This is a test from Settings → Notifications → Hooks.", Link: strings.TrimSuffix(s.d.AppURL, "/"), CreatedAt: s.now().UTC()}
	if err := s.post(ctx, h, "test-"+strconv.FormatInt(s.now().UnixNano(), 36), m); err != nil {
		return &SendError{s.d.Vars.Redact(err.Error())}
	}
	return nil
}
