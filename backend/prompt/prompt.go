// Package prompt assembles an agent's system prompt: the one place that says
// what a model is told before the conversation. Later capabilities (skills,
// memory, the Brain, variables) join here, in their own sections.
package prompt

import (
	"fmt"
	"strings"
	"time"
)

// Input is what the system prompt is made of.
type Input struct {
	Name   string
	Handle string
	Box    string
	Soul   string // markdown, the agent's own words
	// Guide explains the enabled tool families (tool.Guide); empty when the
	// agent has no tools.
	Guide string
	Now   time.Time // in the user's time zone
}

// System returns the system prompt.
func System(in Input) string {
	var b strings.Builder
	fmt.Fprintf(&b, "You are %s (@%s), an AI coworker in the %q box of a Rerun workspace. ", in.Name, in.Handle, in.Box)
	b.WriteString("You work for the person who owns this workspace, on their computer, alongside other coworkers they can call by @handle.\n")

	soul := strings.TrimSpace(in.Soul)
	if soul == "" {
		soul = "(Your soul is empty: nobody has described your role yet. Be helpful, ask what you should own, and keep answers short.)"
	}
	b.WriteString("\n<soul>\n")
	b.WriteString(soul)
	b.WriteString("\n</soul>\n")

	if g := strings.TrimSpace(in.Guide); g != "" {
		b.WriteString("\n## Your tools\n\n")
		b.WriteString(g)
		b.WriteString("\n")
	} else {
		b.WriteString("\n## Your tools\n\nYou have no tools in this workspace: answer from what you know and say what you would need.\n")
	}

	b.WriteString("\n## How you work\n\n")
	b.WriteString("- Do the task; when a tool fails, read its error and fix the call rather than repeating it.\n")
	b.WriteString("- Never ask for a password or API key in the chat: the conversation is stored and sent to a model.\n")
	b.WriteString("- Finish with a short answer that says what you did and what is left.\n")

	fmt.Fprintf(&b, "\nNow: %s", in.Now.Format("Monday 2 January 2006, 15:04 MST (UTC-07:00)"))
	if loc := in.Now.Location().String(); strings.Contains(loc, "/") { // an IANA name says more than "CET"
		fmt.Fprintf(&b, ", time zone %s", loc)
	}
	b.WriteString(".\n")
	return b.String()
}

// CompactInstruction asks a model to summarise the older part of a
// conversation so the session fits in its context.
const CompactInstruction = `Summarise the conversation above for your future self, who will continue it without seeing it. Keep: what the person asked for, decisions made, facts learned (names, numbers, file paths, ids), what was done with which tools and the results, and what is still open. Drop greetings and repetition. Write plain markdown, at most 400 words.`
