package event

import "testing"

func TestSlowSubscriberGetsResync(t *testing.T) {
	var b Bus
	ch, stop := b.Subscribe()
	defer stop()
	for i := 0; i < 300; i++ { // more than the buffer: the writer must not block
		b.Publish(Change{Workspace: "ws", Kind: "agent.updated"})
	}
	for i := 0; i < 256; i++ {
		<-ch
	}
	b.Publish(Change{Workspace: "ws", Kind: "box.created"})
	if c := <-ch; c.Kind != KindResync {
		t.Errorf("first change after an overflow = %q, want %q", c.Kind, KindResync)
	}
	if c := <-ch; c.Kind != "box.created" {
		t.Errorf("next = %q, want box.created", c.Kind)
	}
}

func TestUnsubscribe(t *testing.T) {
	var b Bus
	_, stop := b.Subscribe()
	if b.Subscribers() != 1 {
		t.Fatalf("subscribers = %d, want 1", b.Subscribers())
	}
	stop()
	stop() // twice is fine
	if b.Subscribers() != 0 {
		t.Errorf("subscribers after stop = %d, want 0", b.Subscribers())
	}
	b.Publish(Change{Kind: "x"}) // must not panic on a closed channel
}

func TestRevision(t *testing.T) {
	var b Bus
	r0, other := b.Revision("ws"), b.Revision("other")
	b.Publish(Change{Workspace: "ws", Kind: "agent.updated"})
	if b.Revision("ws") == r0 || b.Revision("other") != other {
		t.Errorf("a change of ws moved ws %d→%d, other %d→%d", r0, b.Revision("ws"), other, b.Revision("other"))
	}
	r1 := b.Revision("ws")
	b.Publish(Change{Workspace: "ws", Kind: KindDelta, Text: "tok"})
	if b.Revision("ws") != r1 {
		t.Errorf("streamed text moved the revision")
	}
	b.Publish(Change{Kind: "sync.settings"}) // of no one workspace: moves all
	if b.Revision("ws") == r1 || b.Revision("other") == other {
		t.Errorf("a change of no workspace did not move every revision")
	}
}
