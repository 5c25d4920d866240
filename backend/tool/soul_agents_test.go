package tool

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// fakeSouls records soul updates.
type fakeSouls struct {
	agentID, soul string
	err           error
}

func (f *fakeSouls) UpdateSoul(ctx context.Context, agentID, soul string) error {
	f.agentID, f.soul = agentID, soul
	return f.err
}

// fakeAgents answers calls from a table of handles.
type fakeAgents struct {
	answers     map[string]string
	handle, msg string
}

func (f *fakeAgents) CallAgent(ctx context.Context, handle, message string) (string, error) {
	f.handle, f.msg = handle, message
	a, ok := f.answers[handle]
	if !ok {
		return "", errors.New("no coworker @" + handle)
	}
	return a, nil
}

func TestUpdateSoul(t *testing.T) {
	tests := []struct {
		name   string
		input  map[string]any
		souls  *fakeSouls
		want   string
		err    string
		stored string
	}{
		{"stores the new soul", map[string]any{"soul": "# Ada\nBe brief."}, &fakeSouls{}, "soul updated (15 bytes); the new version applies from your next run", "", "# Ada\nBe brief."},
		{"empty", map[string]any{"soul": " \n"}, &fakeSouls{}, "", "soul is empty", ""},
		{"too long", map[string]any{"soul": strings.Repeat("x", MaxSoulBytes+1)}, &fakeSouls{}, "", "soul is 65537 bytes; keep it to 65536", ""},
		{"not available", map[string]any{"soul": "x"}, nil, "", "updating the soul is not available", ""},
		{"store fails", map[string]any{"soul": "x"}, &fakeSouls{err: errors.New("disk full")}, "", "update soul: disk full", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := testEnv(t)
			if tt.souls != nil {
				env.Souls = tt.souls
			}
			got, err := call(t, env, "update_soul", tt.input)
			if tt.err != "" {
				wantErr(t, err, nil, tt.err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			if tt.souls.agentID != "a1" || tt.souls.soul != tt.stored {
				t.Errorf("stored soul %q for %q, want %q for a1", tt.souls.soul, tt.souls.agentID, tt.stored)
			}
		})
	}
}

func TestCallAgent(t *testing.T) {
	agents := &fakeAgents{answers: map[string]string{"researcher": "found 3 leads", "verbose": strings.Repeat("v", MaxCallAnswer+10)}}
	tests := []struct {
		name       string
		input      map[string]any
		want       string
		err        string
		wantHandle string
	}{
		{"answer", map[string]any{"handle": "@Researcher", "message": "find leads"}, "found 3 leads", "", "researcher"},
		{"without at", map[string]any{"handle": "researcher", "message": "again"}, "found 3 leads", "", "researcher"},
		{"long answer cut", map[string]any{"handle": "verbose", "message": "talk"}, strings.Repeat("v", MaxCallAnswer) + "\n[truncated: 10 more bytes]", "", "verbose"},
		{"unknown coworker", map[string]any{"handle": "nobody", "message": "hi"}, "", "call @nobody: no coworker @nobody", ""},
		{"self", map[string]any{"handle": "@ada", "message": "hi"}, "", "@ada is you", ""},
		{"empty handle", map[string]any{"handle": "@", "message": "hi"}, "", "handle is empty", ""},
		{"empty message", map[string]any{"handle": "researcher", "message": ""}, "", "message is empty", ""},
		{"long message", map[string]any{"handle": "researcher", "message": strings.Repeat("m", MaxCallMessage+1)}, "", "keep it under 32768", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := testEnv(t)
			env.Agents = agents
			got, err := call(t, env, "call_agent", tt.input)
			if tt.err != "" {
				wantErr(t, err, nil, tt.err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %d bytes %.40q, want %d bytes %.40q", len(got), got, len(tt.want), tt.want)
			}
			if agents.handle != tt.wantHandle || agents.msg != tt.input["message"] {
				t.Errorf("called %q with %q, want %q with %q", agents.handle, agents.msg, tt.wantHandle, tt.input["message"])
			}
		})
	}
	t.Run("not available", func(t *testing.T) {
		_, err := call(t, testEnv(t), "call_agent", map[string]any{"handle": "x1", "message": "hi"})
		wantErr(t, err, invalid, "calling coworkers is not available")
	})
}
