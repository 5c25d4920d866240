package browser

// What the browser tells: DevTools events applied to the tabs, the address
// guard's paused requests, JavaScript dialogs and downloads.

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"
)

// handle applies one DevTools event.
func (p *proc) handle(msg *rod.Message) {
	switch msg.Method {
	case "Target.targetCreated":
		var e proto.TargetTargetCreated
		if msg.Load(&e) && e.TargetInfo.Type == proto.TargetTargetInfoTypePage && e.TargetInfo.Subtype == "" {
			p.addTab(e.TargetInfo)
		}
	case "Target.targetInfoChanged":
		var e proto.TargetTargetInfoChanged
		if msg.Load(&e) {
			p.mu.Lock()
			t := p.tabByTarget(e.TargetInfo.TargetID)
			if t != nil {
				t.url, t.title = e.TargetInfo.URL, e.TargetInfo.Title
			}
			p.mu.Unlock()
			if t != nil {
				p.b.changed()
			}
		}
	case "Target.targetDestroyed":
		var e proto.TargetTargetDestroyed
		if msg.Load(&e) {
			p.removeTab(e.TargetID)
		}
	case "Target.targetCrashed":
		var e proto.TargetTargetCrashed
		if msg.Load(&e) {
			p.mu.Lock()
			if t := p.tabByTarget(e.TargetID); t != nil {
				t.refsValid = false
				t.staleReason = "the tab crashed"
				p.notes = append(p.notes, fmt.Sprintf("Tab %d crashed (%s); open its page again.", t.id, e.Status))
			}
			p.mu.Unlock()
		}
	case "Page.frameNavigated":
		var e proto.PageFrameNavigated
		if msg.Load(&e) && e.Frame.ParentID == "" {
			p.mu.Lock()
			t := p.tabBySession(msg.SessionID)
			if t != nil {
				t.docs++
				t.navs++
				t.url = e.Frame.URL + e.Frame.URLFragment
				if t.refsValid {
					t.refsValid = false
					t.staleReason = "the tab went to another page (" + cutURL(t.url, 100) + ")"
				}
			}
			p.mu.Unlock()
			if t != nil {
				go p.readHistory(t)
			}
		}
	case "Page.navigatedWithinDocument":
		var e proto.PageNavigatedWithinDocument
		if msg.Load(&e) {
			p.mu.Lock()
			t := p.tabBySession(msg.SessionID)
			if t != nil && string(e.FrameID) == string(t.target) {
				t.navs++
				t.url = e.URL
			} else {
				t = nil
			}
			p.mu.Unlock()
			if t != nil {
				go p.readHistory(t)
			}
		}
	case "Page.frameRequestedNavigation":
		var e proto.PageFrameRequestedNavigation
		if msg.Load(&e) {
			p.mu.Lock()
			if t := p.tabBySession(msg.SessionID); t != nil && string(e.FrameID) == string(t.target) {
				t.requested++
			}
			p.mu.Unlock()
		}
	case "Page.frameStartedLoading", "Page.frameStoppedLoading":
		var frame proto.PageFrameID
		if msg.Method == "Page.frameStartedLoading" {
			var e proto.PageFrameStartedLoading
			msg.Load(&e)
			frame = e.FrameID
		} else {
			var e proto.PageFrameStoppedLoading
			msg.Load(&e)
			frame = e.FrameID
		}
		p.mu.Lock()
		t := p.tabBySession(msg.SessionID)
		if t != nil && string(frame) == string(t.target) {
			t.loading = msg.Method == "Page.frameStartedLoading"
			if !t.loading {
				t.stops++
				casting := t == p.casting
				// Title changes are not reliably announced: read it once
				// the page has loaded, for the Desktop panel.
				go func() {
					p.info(t)
					p.b.changed()
					if casting {
						p.b.recast(t)
					}
				}()
			}
		}
		p.mu.Unlock()
	case "Page.javascriptDialogOpening":
		var e proto.PageJavascriptDialogOpening
		if msg.Load(&e) {
			p.handleDialog(msg.SessionID, &e)
		}
	case "Page.screencastFrame":
		var e proto.PageScreencastFrame
		if msg.Load(&e) {
			p.frame(msg.SessionID, &e)
		}
	case "Fetch.requestPaused":
		var e proto.FetchRequestPaused
		if msg.Load(&e) {
			p.guard(&e)
		}
	case "Browser.downloadWillBegin":
		var e proto.BrowserDownloadWillBegin
		if msg.Load(&e) {
			p.mu.Lock()
			p.downloads[e.GUID] = e.SuggestedFilename
			p.mu.Unlock()
		}
	case "Browser.downloadProgress":
		var e proto.BrowserDownloadProgress
		if msg.Load(&e) && e.State != proto.BrowserDownloadProgressStateInProgress {
			p.downloaded(&e)
		}
	default:
		return
	}
	p.changed()
}

// guard fails requests to forbidden addresses and lets every other paused
// request go on.
func (p *proc) guard(e *proto.FetchRequestPaused) {
	u, _ := url.Parse(e.Request.URL)
	if !p.b.m.forbid.blocks(u) {
		go func() { _ = proto.FetchContinueRequest{RequestID: e.RequestID}.Call(p.rb) }()
		return
	}
	p.b.m.log.Warn("refused a request to the local server", "agent", p.b.agentID, "type", e.ResourceType)
	p.mu.Lock()
	p.blocked = append(p.blocked, e.Request.URL)
	if e.ResourceType == proto.NetworkResourceTypeDocument {
		if t := p.tabByTarget(proto.TargetTargetID(e.FrameID)); t != nil {
			t.blockedNav = e.Request.URL
		}
	}
	p.mu.Unlock()
	go func() {
		_ = proto.FetchFailRequest{RequestID: e.RequestID, ErrorReason: proto.NetworkErrorReasonBlockedByClient}.Call(p.rb)
	}()
}

// handleDialog answers alerts, confirms and prompts so they never block the
// page (and every tool with it), and tells the agent what was shown.
func (p *proc) handleDialog(session proto.TargetSessionID, e *proto.PageJavascriptDialogOpening) {
	p.mu.Lock()
	t := p.tabBySession(session)
	if t == nil {
		p.mu.Unlock()
		return
	}
	what := fmt.Sprintf("The page showed a %s dialog %q; it was accepted.", e.Type, clip(e.Message, 300))
	if e.Type == proto.PageDialogTypeBeforeunload {
		what = "The page asked to confirm leaving it; leaving was accepted."
	}
	p.notes = append(p.notes, what)
	page := t.page
	p.mu.Unlock()
	go func() {
		_ = proto.PageHandleJavaScriptDialog{Accept: true, PromptText: e.DefaultPrompt}.Call(page)
	}()
}

// downloaded moves a finished download from its GUID name to its own name
// in the agent's downloads folder and tells the agent.
func (p *proc) downloaded(e *proto.BrowserDownloadProgress) {
	p.mu.Lock()
	name := p.downloads[e.GUID]
	delete(p.downloads, e.GUID)
	p.mu.Unlock()
	dir := p.b.downloadsDir()
	var note string
	if e.State == proto.BrowserDownloadProgressStateCanceled {
		note = fmt.Sprintf("The download of %q was cancelled.", name)
	} else {
		final := uniqueName(dir, safeFileName(name))
		if err := os.Rename(filepath.Join(dir, e.GUID), filepath.Join(dir, final)); err != nil {
			p.b.m.log.Error("name a download", "agent", p.b.agentID, "err", err)
			final = e.GUID
		}
		note = fmt.Sprintf("Downloaded %s (%d bytes) to downloads/%s in your folder.", name, int64(e.ReceivedBytes), final)
	}
	p.mu.Lock()
	p.notes = append(p.notes, note)
	p.mu.Unlock()
}

// safeFileName keeps a suggested download name to one plain path element.
func safeFileName(name string) string {
	name = strings.Map(func(r rune) rune {
		if r < 32 || strings.ContainsRune(`/\:*?"<>|`, r) {
			return '_'
		}
		return r
	}, name)
	name = strings.Trim(name, ". ")
	if name == "" {
		return "download"
	}
	if len(name) > 120 {
		ext := filepath.Ext(name)
		if len(ext) > 20 {
			ext = ""
		}
		name = name[:120-len(ext)] + ext
	}
	return name
}

// uniqueName returns name, or "name (2).ext" and so on if taken in dir.
func uniqueName(dir, name string) string {
	ext := filepath.Ext(name)
	base := strings.TrimSuffix(name, ext)
	for i := 1; ; i++ {
		n := name
		if i > 1 {
			n = fmt.Sprintf("%s (%d)%s", base, i, ext)
		}
		if _, err := os.Lstat(filepath.Join(dir, n)); os.IsNotExist(err) {
			return n
		}
	}
}
