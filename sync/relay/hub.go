package relay

import (
	"slices"
	"sync"

	"github.com/coder/websocket"
)

// hub holds this process's sockets: per workspace, one per device. The
// newest socket that takes webhooks (hooks=1) is the workspace's hook
// socket, the only one deliveries are sent on.
type hub struct {
	mu    sync.Mutex
	rooms map[string][]*session // by workspace, oldest first
}

// add registers s, ending the older socket of its device: the desktop
// reconnected (after sleep, on another network) before the old one timed
// out. A hook socket that s displaces stops sending deliveries; those it
// sent and that are not yet answered come again on s.
func (h *hub) add(s *session) {
	h.mu.Lock()
	room := h.rooms[s.ws.ID]
	var old *session
	if i := slices.IndexFunc(room, func(o *session) bool { return o.device == s.device }); i >= 0 {
		old = room[i]
		room = slices.Delete(room, i, i+1)
	}
	room = append(room, s)
	h.rooms[s.ws.ID] = room
	hooked := hookSocket(room)
	h.mu.Unlock()
	if old != nil {
		old.end(statusReplaced, "replaced by a newer connection of this device")
	}
	if hooked != nil && hooked != s {
		hooked.poke() // the replaced socket may have been the hook socket
	}
}

func (h *hub) remove(s *session) {
	h.mu.Lock()
	room := h.rooms[s.ws.ID]
	if i := slices.Index(room, s); i >= 0 {
		room = slices.Delete(room, i, i+1)
		if len(room) == 0 {
			delete(h.rooms, s.ws.ID)
		} else {
			h.rooms[s.ws.ID] = room
		}
	}
	var next *session
	if s.hooks {
		next = hookSocket(room)
	}
	h.mu.Unlock()
	if next != nil {
		next.poke() // it is the hook socket now: it sends what is due
	}
}

// hookSocket is the newest socket of room that takes webhooks, or nil.
func hookSocket(room []*session) *session {
	for i := len(room) - 1; i >= 0; i-- {
		if room[i].hooks {
			return room[i]
		}
	}
	return nil
}

// isHookSocket says whether deliveries go to s.
func (h *hub) isHookSocket(s *session) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return hookSocket(h.rooms[s.ws.ID]) == s
}

// poke wakes the workspace's hook socket to look for due deliveries; ""
// wakes those of all workspaces.
func (h *hub) poke(workspaceID string) {
	h.mu.Lock()
	var list []*session
	for id, room := range h.rooms {
		if workspaceID == "" || id == workspaceID {
			if s := hookSocket(room); s != nil {
				list = append(list, s)
			}
		}
	}
	h.mu.Unlock()
	for _, s := range list {
		s.poke()
	}
}

// changed tells every socket of the workspace whose device is not among
// from that its change log grew to last.
func (h *hub) changed(workspaceID string, last int64, from []string) {
	h.mu.Lock()
	var list []*session
	for _, s := range h.rooms[workspaceID] {
		if !slices.Contains(from, s.device) {
			list = append(list, s)
		}
	}
	h.mu.Unlock()
	for _, s := range list {
		s.changed(last)
	}
}

// notice handles what another relay process (or this one, through the
// store) announced.
func (h *hub) notice(n Notice) {
	if n.Changes {
		h.changed(n.WorkspaceID, n.Last, n.From)
		return
	}
	h.poke(n.WorkspaceID)
}

// lost is called when notifications may have been missed: every socket
// looks again for due deliveries and for the newest seq.
func (h *hub) lost() {
	h.mu.Lock()
	var list []*session
	for _, room := range h.rooms {
		list = append(list, room...)
	}
	h.mu.Unlock()
	for _, s := range list {
		s.poke()
		s.changed(-1)
	}
}

func (h *hub) close(workspaceID string) {
	h.mu.Lock()
	room := slices.Clone(h.rooms[workspaceID])
	h.mu.Unlock()
	for _, s := range room {
		s.end(websocket.StatusPolicyViolation, "the workspace was unlinked")
	}
}

// count returns the workspaces with a socket, and the sockets.
func (h *hub) count() (workspaces, devices int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, room := range h.rooms {
		devices += len(room)
	}
	return len(h.rooms), devices
}
