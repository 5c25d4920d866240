package outbox_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/notify"
	"github.com/rerun-build/rerun-desktop/backend/outbox"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

// phones records pushes; the first fails fails of them. (The real sender,
// through a relay to a push service, is tested in backend/relaylink.)
type phones struct {
	mu     sync.Mutex
	paired bool
	fails  int
	sent   []string // send ids, one per attempt
	last   outbox.Message
}

func (p *phones) PhonesPaired() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.paired
}

func (p *phones) PushPhones(_ context.Context, sendID string, m outbox.Message) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sent = append(p.sent, sendID)
	p.last = m
	if len(p.sent) <= p.fails {
		return errors.New("push service answered 503")
	}
	return nil
}

func (p *phones) attempts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.sent)
}

// A card goes to the phones once a phone is paired, masked, retried with
// the same send id after a failure; without a paired phone nothing is
// queued for them.
func TestPhoneChannel(t *testing.T) {
	f := newFixture(t, outbox.Deps{}, outbox.Config{Backoff: time.Millisecond})
	p := &phones{fails: 1}
	f.out.SetPhones(p)
	f.out.Start()
	none := f.card(t, notify.Question, questionCard, "Has a question for you", "", true)
	if id, _, _, _ := f.row(t, none, outbox.ChannelPhone); id != "" {
		t.Errorf("queued %s for phones while none is paired", id)
	}

	p.mu.Lock()
	p.paired = true
	p.mu.Unlock()
	n := f.card(t, notify.Question, questionCard, "Has a question for you", "Token "+leaked, true)
	waittest.Until(t, "the push is sent after a retry", func() bool {
		_, status, _, _ := f.row(t, n, outbox.ChannelPhone)
		return status == outbox.Sent
	})
	id, _, attempts, _ := f.row(t, n, outbox.ChannelPhone)
	p.mu.Lock()
	sent, last := p.sent, p.last
	p.mu.Unlock()
	if attempts != 2 || len(sent) != 2 || sent[0] != id || sent[1] != id {
		t.Errorf("attempts %d, send ids %v, want two of %s", attempts, sent, id)
	}
	if last.PauseID == "" || last.NotificationID != n.ID || len(last.Questions) != 1 {
		t.Errorf("the message pushed: %+v", last)
	}
	if got := last.Body + last.Questions[0].Question; contains(got, leaked) {
		t.Errorf("the push carries a secret value: %q", got)
	}
	list, err := f.out.Deliveries(context.Background(), outbox.ListOptions{NotificationID: n.ID})
	if err != nil || len(list) != 1 || list[0].TargetName != "your phones" {
		t.Errorf("deliveries %+v %v", list, err)
	}

	// A card from the person's own run stays in the app by default.
	mine := f.card(t, notify.Question, questionCard, "Has a question for you", "", false)
	if id, _, _, _ := f.row(t, mine, outbox.ChannelPhone); id != "" || p.attempts() != 2 {
		t.Errorf("a card of the person's own run was queued for phones (%s)", id)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
