// Package prompt assembles an agent's system prompt: the one place that says
// what a model is told before the conversation. Each capability that adds to
// it (skills, memory; later the Brain, variables) has its own section.
package prompt

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
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
	// Skills is the skill index: one "name: description" line per skill;
	// empty leaves the section out.
	Skills string
	// Memories are the facts recalled for this run, best first, each
	// carrying its id ("[mem_…] text"); at most MaxMemoriesBytes of them
	// are shown.
	Memories []string
	// Variables are the names (never the values) of the workspace's
	// secret variables, which tools resolve from ${NAME}.
	Variables []string
	// Brain are the workspace's pages, every agent's shared knowledge of
	// the company; none leaves the section out. BrainPropose says the agent
	// may propose edits (propose_brain_edit).
	Brain        []BrainPage
	BrainPropose bool
	Now          time.Time // in the user's time zone
}

// MaxMemoriesBytes bounds the "What you remember" section: recalled facts
// inform the run, they must not crowd out the conversation.
const MaxMemoriesBytes = 2048

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

	if idx := strings.TrimSpace(in.Skills); idx != "" {
		b.WriteString("\n## Your skills\n\n")
		b.WriteString("Written procedures you can follow. When a task matches one, load it with load_skill first, then follow it.\n\n")
		for _, line := range strings.Split(idx, "\n") {
			if line = strings.TrimSpace(line); line != "" {
				b.WriteString("- " + line + "\n")
			}
		}
	}

	b.WriteString(brainSection(in.Brain, in.BrainPropose))

	if mems := memories(in.Memories); mems != "" {
		b.WriteString("\n## What you remember\n\n")
		b.WriteString("Facts from earlier work that look relevant here (ids in brackets: cite the id of one you use, e.g. [mem_…]; for remember's replaces and forget):\n\n")
		b.WriteString(mems)
	}

	if len(in.Variables) > 0 {
		b.WriteString("\n## Variables\n\n")
		b.WriteString("Secrets the person stored for you. Write ${NAME} where a value goes (a command, its env, a request header); it is filled in when the tool runs. You never see the values: outputs show [redacted:NAME] instead.\n\n")
		for _, n := range in.Variables {
			b.WriteString("- ${" + n + "}\n")
		}
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

// memories renders the recalled facts as a list of at most MaxMemoriesBytes,
// dropping whole facts from the end; a first fact longer than the bound is cut
// on a character boundary.
func memories(facts []string) string {
	var b strings.Builder
	left := 0
	for i, f := range facts {
		f = strings.Join(strings.Fields(f), " ") // one fact, one line
		if f == "" {
			continue
		}
		line := "- " + f + "\n"
		if b.Len()+len(line) > MaxMemoriesBytes {
			if b.Len() == 0 {
				cut := MaxMemoriesBytes - len("- …\n")
				for cut > 0 && !utf8.RuneStart(f[cut]) {
					cut--
				}
				b.WriteString("- " + f[:cut] + "…\n")
				i++
			}
			left = len(facts) - i
			break
		}
		b.WriteString(line)
	}
	if left > 0 {
		fmt.Fprintf(&b, "(%d more not shown; use recall to search)\n", left)
	}
	return b.String()
}

// CompactInstruction asks a model to summarise the older part of a
// conversation so the session fits in its context.
const CompactInstruction = `Summarise the conversation above for your future self, who will continue it without seeing it. Keep: what the person asked for, decisions made, facts learned (names, numbers, file paths, ids), what was done with which tools and the results, and what is still open. Drop greetings and repetition. Write plain markdown, at most 400 words.`
