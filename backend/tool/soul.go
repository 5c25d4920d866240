package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/jsonarg"
)

// MaxSoulBytes is the longest soul update_soul accepts (the agent package
// holds the same limit).
const MaxSoulBytes = 64 << 10

func soulTools() []Tool {
	return []Tool{{
		Name:   "update_soul",
		Family: "soul",
		Description: "Replace your soul (your system prompt, markdown) with a new version. Send the WHOLE new soul, not a diff: " +
			"start from the current one in your instructions and change what you learned. Every version is kept, so the " +
			"person can roll back. At most 64 KiB.",
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"soul":{"type":"string","description":"The complete new soul, in markdown."}` +
			`},"required":["soul"],"additionalProperties":false}`),
		Run:  updateSoul,
		Acts: always,
		Preview: func(_ *Env, input json.RawMessage) (string, string, string) {
			return "Rewrite its soul", "text", argsOf(input).str("soul")
		},
	}}
}

func updateSoul(ctx context.Context, env *Env, input json.RawMessage) (string, error) {
	var in struct {
		Soul string `json:"soul"`
	}
	if err := jsonarg.Decode(input, &in); err != nil {
		return "", err
	}
	switch {
	case strings.TrimSpace(in.Soul) == "":
		return "", fault.Invalid("soul is empty; send the complete new soul (markdown), not an empty text")
	case len(in.Soul) > MaxSoulBytes:
		return "", fault.Invalid("soul is %d bytes; keep it to %d — move long reference material into files or skills", len(in.Soul), MaxSoulBytes)
	case !utf8.ValidString(in.Soul):
		return "", fault.Invalid("soul is not valid UTF-8 text")
	}
	if env.Souls == nil {
		return "", fault.Invalid("updating the soul is not available in this run")
	}
	if err := env.refuseSecrets("soul", "a soul", in.Soul); err != nil {
		return "", err
	}
	if err := env.Souls.UpdateSoul(ctx, env.AgentID, in.Soul); err != nil {
		return "", fmt.Errorf("update soul: %w", err)
	}
	return fmt.Sprintf("soul updated (%d bytes); the new version applies from your next run", len(in.Soul)), nil
}
