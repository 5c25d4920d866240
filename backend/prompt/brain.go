package prompt

import (
	"fmt"
	"strings"
)

// BrainPage is one page of the workspace's Brain as the prompt shows it.
type BrainPage struct {
	Title   string
	Version int    // agents base their proposals on it
	Summary string // one line, at most 300 characters
	Body    string // markdown
}

// The Brain's share of the prompt. While every page fits MaxBrainInlineBytes
// the pages are shown whole; past it the prompt holds an index of titles and
// summaries of at most MaxBrainIndexBytes, and the agent reads a page with
// read_brain_page. Either way the section stays bounded however large the
// Brain grows.
const (
	MaxBrainInlineBytes = 6 << 10
	MaxBrainIndexBytes  = 4 << 10
)

// brainSection renders the Brain; "" when it has no page.
func brainSection(pages []BrainPage, propose bool) string {
	if len(pages) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n## The Brain\n\n")
	b.WriteString("The workspace's pages about the company you work for (what it sells, to whom, how it works), shared by every coworker. Rely on them; when what you find contradicts a page, say so.\n")
	if inlineSize(pages) <= MaxBrainInlineBytes {
		for _, p := range pages {
			b.WriteString(inlinePage(p))
		}
	} else {
		b.WriteString("\nThe Brain is too large to show whole: this is its index. Read a page with read_brain_page(title) before you rely on it.\n\n")
		written := 0
		for i, p := range pages {
			line := fmt.Sprintf("- %s (version %d)", p.Title, p.Version)
			if s := strings.Join(strings.Fields(p.Summary), " "); s != "" {
				line += ": " + s
			}
			line += "\n"
			if written+len(line) > MaxBrainIndexBytes {
				fmt.Fprintf(&b, "(%d more pages not listed; read_brain_page with any title lists them all)\n", len(pages)-i)
				break
			}
			b.WriteString(line)
			written += len(line)
		}
	}
	if propose {
		b.WriteString("\nTo change a page or add one, call propose_brain_edit with the whole new page, the version you started from and your reason: the person approves or declines it. Never write the Brain any other way.\n")
	}
	return b.String()
}

// inlinePage is one page shown whole.
func inlinePage(p BrainPage) string {
	return fmt.Sprintf("\n<page title=%q version=\"%d\">\n%s\n</page>\n", p.Title, p.Version, strings.TrimSpace(p.Body))
}

// inlineSize is what showing every page whole costs, exactly: a quoted
// title may be longer than the title.
func inlineSize(pages []BrainPage) int {
	n := 0
	for _, p := range pages {
		n += len(inlinePage(p))
	}
	return n
}
