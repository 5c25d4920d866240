package llm

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// sse joins events into a text/event-stream body.
func sse(events ...string) string {
	var b strings.Builder
	for _, e := range events {
		if !strings.HasPrefix(e, "event:") && !strings.HasPrefix(e, ":") {
			e = "data: " + e
		}
		b.WriteString(e + "\n\n")
	}
	return b.String()
}

func TestReadChatStream(t *testing.T) {
	const (
		role  = `{"id":"c1","model":"m1","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`
		stop  = `{"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`
		usage = `{"id":"c1","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":4}}}`
	)
	text := func(s string) string {
		return `{"id":"c1","choices":[{"index":0,"delta":{"content":"` + s + `"}}]}`
	}
	call := func(index, rest string) string {
		return `{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":` + index + `,` + rest + `}]}}]}`
	}
	cases := []struct {
		name   string
		body   string
		deltas []string
		want   chatStreamResult
		err    error // errors.Is target, or nil
		errMsg string
	}{
		{name: "text and usage", body: sse(role, text("Hel"), text("lo"), stop, usage, "[DONE]"),
			deltas: []string{"Hel", "lo"},
			want: chatStreamResult{Model: "m1", Content: "Hello", Finish: "stop", Finished: true,
				Usage: chatUsage{PromptTokens: 12, CompletionTokens: 3, PromptTokensDetails: chatPromptDetails{CachedTokens: 4}}}},
		{name: "tool calls from deltas", body: sse(role,
			call("0", `"id":"a","type":"function","function":{"name":"wea","arguments":""}`),
			call("1", `"id":"b","type":"function","function":{"name":"now","arguments":"{}"}`),
			call("0", `"function":{"name":"ther","arguments":"{\"city\":"}`),
			call("0", `"function":{"arguments":"\"Oslo\"}"}`),
			`{"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`, "[DONE]"),
			want: chatStreamResult{Model: "m1", Finish: "tool_calls", Finished: true, Calls: []chatToolCall{
				{ID: "a", Type: "function", Function: chatFunctionCall{Name: "weather", Arguments: `{"city":"Oslo"}`}},
				{ID: "b", Type: "function", Function: chatFunctionCall{Name: "now", Arguments: "{}"}},
			}}},
		{name: "CRLF, comments, multi-line data, other choices", body: strings.ReplaceAll(
			": keep-alive\n\n"+
				"data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\n"+
				"data: \"delta\":{\"content\":\"a\"}},{\"index\":1,\"delta\":{\"content\":\"other\"}}]}\n\n"+
				"id: 7\nretry: 10\ndata:"+stop+"\n\n", "\n", "\r\n"),
			deltas: []string{"a"}, want: chatStreamResult{Content: "a", Finish: "stop", Finished: true}},
		{name: "no finish reason", body: sse(role, text("half")),
			deltas: []string{"half"}, want: chatStreamResult{Model: "m1", Content: "half"}},
		{name: "error event", body: sse(role, text("x"), `{"error":{"message":"model crashed","type":"server_error","code":null}}`, stop),
			deltas: []string{"x"}, errMsg: "the provider reported an error mid-stream: model crashed"},
		{name: "named error event", body: sse("event: error\ndata: {\"type\":\"error\",\"message\":\"busy\"}"),
			errMsg: "the provider reported an error mid-stream: busy"},
		{name: "another completion", body: sse(role, `{"id":"c2","choices":[]}`), err: errInconsistentChunk},
		{name: "tool index out of range", body: sse(call("128", `"id":"z"`)), err: errInconsistentChunk},
		{name: "not JSON", body: sse(role, `{"choices":[{"delta":{"content":"x`), errMsg: "decode stream chunk: unexpected end of JSON input"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var deltas []string
			got, err := readChatStream(strings.NewReader(tc.body), func(s string) { deltas = append(deltas, s) })
			switch {
			case tc.err != nil || tc.errMsg != "":
				if err == nil || (tc.err != nil && !errors.Is(err, tc.err)) || (tc.errMsg != "" && err.Error() != tc.errMsg) {
					t.Fatalf("error: got %v, want %v%s", err, tc.err, tc.errMsg)
				}
			case err != nil:
				t.Fatalf("readChatStream: %v", err)
			default:
				if !reflect.DeepEqual(got, tc.want) {
					t.Errorf("result:\n got %+v\nwant %+v", got, tc.want)
				}
			}
			if !reflect.DeepEqual(deltas, tc.deltas) {
				t.Errorf("deltas: got %q, want %q", deltas, tc.deltas)
			}
		})
	}
}

// FuzzChatStream feeds readChatStream arbitrary bytes: it must not panic,
// must hand onDelta exactly the text it returns, must bound the tool calls
// it keeps, and must read the same answer however the bytes are split.
func FuzzChatStream(f *testing.F) {
	f.Add(sse(`{"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"Hi"}}]}`,
		`{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
		`{"id":"c","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1}}`, "[DONE]"))
	f.Add(sse(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"t","arguments":"{\"x\""}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":2,"function":{"arguments":":1}"}}]},"finish_reason":"tool_calls"}]}`))
	f.Add(sse(`{"error":{"message":"boom","type":"server_error"}}`))
	f.Add("event: error\r\ndata: not json\r\n\r\n")
	f.Add(": ping\n\ndata: {\"choices\":[{\"index\":0,\n\n")
	f.Add("data: [DONE]\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"after\"}}]}\n\n")
	f.Add("data:{\"choices\":[{\"index\":-1}]}\n\ndata")
	f.Fuzz(func(t *testing.T, body string) {
		var text strings.Builder
		got, err := readChatStream(strings.NewReader(body), func(s string) {
			if s == "" {
				t.Errorf("onDelta got an empty piece")
			}
			text.WriteString(s)
		})
		if err == nil && got.Content != text.String() {
			t.Errorf("content %q differs from the deltas %q", got.Content, text.String())
		}
		if len(got.Calls) > maxStreamCalls {
			t.Errorf("kept %d tool calls, more than %d", len(got.Calls), maxStreamCalls)
		}
		again, err2 := readChatStream(iotest.OneByteReader(strings.NewReader(body)), func(string) {})
		if (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) || !reflect.DeepEqual(got, again) {
			t.Errorf("byte by byte: got %+v, %v; whole: %+v, %v", again, err2, got, err)
		}
	})
}
