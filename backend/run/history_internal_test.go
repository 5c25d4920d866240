package run

import (
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/llm"
)

func TestTrimToolOutputs(t *testing.T) {
	big := strings.Repeat("x", 40000)
	msgs := []llm.Message{
		{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartText, Text: "go"}}},
		{Role: llm.RoleAssistant, Parts: []llm.Part{{Type: llm.PartToolUse, ToolCallID: "a"}, {Type: llm.PartToolUse, ToolCallID: "b"}}},
		{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartToolResult, ToolCallID: "a", Output: big}, {Type: llm.PartToolResult, ToolCallID: "b", Output: big}}},
		{Role: llm.RoleAssistant, Parts: []llm.Part{{Type: llm.PartToolUse, ToolCallID: "c"}}},
		{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartToolResult, ToolCallID: "c", Output: big}}},
	}
	out := trimToolOutputs(msgs, 21000)
	a, b, c := out[2].Parts[0].Output, out[2].Parts[1].Output, out[4].Parts[0].Output
	if !strings.Contains(a, "trimmed") || len(a) > 2*keepTool {
		t.Errorf("oldest output not trimmed: %d bytes", len(a))
	}
	if len(b) != len(big) {
		t.Errorf("second output trimmed although the first was enough: %d bytes", len(b))
	}
	if c != big {
		t.Error("the latest tool output was trimmed")
	}
	if got := estimateTokens(out); got > 21000 {
		t.Errorf("estimate after trimming = %d, want ≤ 21000", got)
	}
}

func TestMessagesCloseUnansweredToolCalls(t *testing.T) {
	steps := map[string][]Step{"r1": {
		{Kind: StepInput, Data: []byte(`{"text":"hi","from":"@boss"}`)},
		{Kind: StepModel, Data: []byte(`{"text":"on it","tool_calls":[{"id":"t1","name":"x","input":{}}]}`)},
		{Kind: StepToolCall, Data: []byte(`{"id":"t1","name":"x","input":{}}`)},
		{Kind: StepError, Data: []byte(`{"message":"boom"}`)},
	}, "r2": {
		{Kind: StepInput, Data: []byte(`{"text":"again","from":"you"}`)},
	}}
	msgs, err := messages("", []string{"r1", "r2"}, steps)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 3 {
		t.Fatalf("messages = %d, want user, assistant, user (results merged with the next input)", len(msgs))
	}
	if !strings.HasPrefix(msgs[0].Parts[0].Text, "[message from @boss]") {
		t.Errorf("input from another agent = %q", msgs[0].Parts[0].Text)
	}
	last := msgs[2].Parts
	if last[0].Type != llm.PartToolResult || last[0].ToolCallID != "t1" || !last[0].IsError || last[1].Text != "again" {
		t.Errorf("last message = %+v; want the interrupted result for t1, then the new input", last)
	}
}

func TestMessagesRefuseAStepThatDoesNotDecode(t *testing.T) {
	steps := map[string][]Step{"r1": {
		{Kind: StepInput, Data: []byte(`{"text":"hi"}`)},
		{Kind: StepModel, Seq: 2, Data: []byte(`{"text":`)},
	}}
	if _, err := messages("", []string{"r1"}, steps); err == nil || !strings.Contains(err.Error(), "model step 2") {
		t.Fatalf("err = %v, want the step that does not decode named", err)
	}
}
