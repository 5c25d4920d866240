package outbox

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/mail"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"strings"

	gomail "github.com/wneessen/go-mail"
)

// MessageID is the Message-ID (without angle brackets) of the mail with
// send id id.
func MessageID(id string) string { return id + "@rerun.local" }

// sendMail sends m with send id id through the server e names.
func (s *Service) sendMail(ctx context.Context, e Email, id string, m Message) error {
	msg := gomail.NewMsg()
	if err := msg.From(e.From); err != nil {
		return &permanent{fmt.Errorf("from address %q: %w", e.From, err)}
	}
	to, err := mail.ParseAddressList(e.To)
	if err != nil {
		return &permanent{fmt.Errorf("to address %q: %w", e.To, err)}
	}
	msg.ToMailAddress(to...)
	msg.Subject(m.Subject())
	msg.SetMessageIDWithValue(MessageID(id))
	msg.SetDate()
	msg.SetGenHeader("Auto-Submitted", "auto-generated") // RFC 3834: no vacation replies
	msg.SetGenHeader("X-Rerun-Notification", m.NotificationID)
	msg.SetGenHeader("X-Rerun-Kind", m.Kind)
	if m.Link != "" {
		msg.SetGenHeader("X-Rerun-Link", m.Link)
	}
	msg.SetUserAgent("Rerun")
	msg.SetBodyString(gomail.TypeTextPlain, m.Text())
	c, err := s.mailClient(e)
	if err != nil {
		return err
	}
	if err := c.DialAndSendWithContext(ctx, msg); err != nil {
		return fmt.Errorf("the mail server %s:%d answered: %w", e.Host, e.Port, err)
	}
	return nil
}

func (s *Service) mailClient(e Email) (*gomail.Client, error) {
	conf := &tls.Config{MinVersion: tls.VersionTLS12}
	if s.d.TLS != nil {
		conf = s.d.TLS.Clone()
	}
	conf.ServerName = e.Host
	opts := []gomail.Option{gomail.WithPort(e.Port), gomail.WithTimeout(s.c.Timeout), gomail.WithTLSConfig(conf), gomail.WithHELO("rerun.local")}
	switch e.TLS {
	case TLS:
		opts = append(opts, gomail.WithSSL())
	case NoTLS:
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
	default:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	}
	if e.User != "" {
		password := ""
		if e.Password != "" {
			var err error
			if password, err = s.d.Vars.Resolve(e.Password); err != nil {
				return nil, fmt.Errorf("the SMTP password %s: %w", e.Password, err)
			}
		}
		auth := gomail.SMTPAuthAutoDiscover // the strongest the server offers
		if e.TLS == NoTLS {
			// Only to this computer (Check): PLAIN without TLS is what a
			// local relay or bridge offers.
			auth = gomail.SMTPAuthPlainNoEnc
		}
		opts = append(opts, gomail.WithSMTPAuth(auth), gomail.WithUsername(e.User), gomail.WithPassword(password))
	}
	c, err := gomail.NewClient(e.Host, opts...)
	if err != nil {
		return nil, &permanent{fmt.Errorf("mail settings: %w", err)}
	}
	return c, nil
}

// TestEmail sends a test mail with settings e (checked first), now, and
// returns the server's answer when it fails.
func (s *Service) TestEmail(ctx context.Context, e Email) error {
	if err := e.Check(s.d.Vars.Has); err != nil {
		return err
	}
	if e.Host == "" {
		return fault.Invalid("no SMTP host: fill in the email settings first")
	}
	ctx, cancel := context.WithTimeout(ctx, s.c.Timeout)
	defer cancel()
	m := Message{
		Workspace: s.d.Workspace, Kind: "test", Agent: "Rerun", Title: "Test email",
		Body: "This is a test from Settings → Notifications → Email. Mails for the cards you chose will look like this one.",
		Link: strings.TrimSuffix(s.d.AppURL, "/"),
	}
	id := "test-" + strings.ReplaceAll(s.now().UTC().Format("20060102T150405.000000000"), ".", "")
	if err := s.sendMail(ctx, e, id, m); err != nil {
		return &SendError{s.d.Vars.Redact(err.Error())}
	}
	return nil
}

// SendError is a test send the server refused: Error is its answer.
type SendError struct{ Answer string }

func (e *SendError) Error() string { return e.Answer }
