package tool

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/jsonarg"
	"github.com/rerun-build/rerun-desktop/backend/pause"
)

// Notifier tells the person something without stopping the run (notify).
type Notifier interface {
	Notify(ctx context.Context, kind, title, body string) error
}

// pauseTool declares a tool that ends the agent's turn with a card for the
// person. Its Run is never called: the runtime stores the request, pauses
// the run, and hands the answer back as the tool's result.
func pauseTool(name, description, schema string, parse func(json.RawMessage) (any, error), kind string) Tool {
	return Tool{
		Name: name, Family: "human", Description: description, Schema: json.RawMessage(schema),
		Pause: func(input json.RawMessage) (string, any, error) {
			req, err := parse(input)
			return kind, req, err
		},
		Run: func(context.Context, *Env, json.RawMessage) (string, error) {
			return "", fault.Invalid("%s pauses the run; only the runtime can carry it out", name)
		},
	}
}

func humanTools() []Tool {
	return []Tool{
		pauseTool("ask_question",
			"Ask the person 1 to 6 questions in ONE card and stop until they answer. Give each question suggested answers "+
				"(options, shown as buttons); they can always type something else. Your turn ends here; their answers come back "+
				"as this tool's result. Ask everything you need at once: you get one card at a time.",
			`{"type":"object","properties":{"questions":{"type":"array","description":"1 to 6 questions, shown together.","minItems":1,"maxItems":6,"items":{"type":"object","properties":{`+
				`"question":{"type":"string","description":"The full question."},`+
				`"header":{"type":"string","description":"A short label, a few words."},`+
				`"options":{"type":"array","maxItems":6,"items":{"type":"string"},"description":"Suggested answers."},`+
				`"multiple":{"type":"boolean","description":"The person may pick several options."}`+
				`},"required":["question"],"additionalProperties":false}}},"required":["questions"],"additionalProperties":false}`,
			func(in json.RawMessage) (any, error) {
				var r pause.QuestionRequest
				if err := jsonarg.Decode(in, &r); err != nil {
					return nil, err
				}
				return r, r.Check()
			}, pause.Question),
		pauseTool("request_approval",
			"Ask the person to approve or decline a list of actions before you take them, each with its detail (the command, "+
				"the target, or a unified diff). Your turn ends here. When an item names a tool and its input, Rerun runs that "+
				"tool for you if it is approved and never if it is declined; the decisions come back item by item as this tool's "+
				"result. Never perform a declined action another way.",
			`{"type":"object","properties":{`+
				`"title":{"type":"string","description":"What this batch is about."},`+
				`"reason":{"type":"string","description":"Why you want to do it."},`+
				`"items":{"type":"array","description":"The actions, each approved or declined on its own.","minItems":1,"maxItems":20,"items":{"type":"object","properties":{`+
				`"title":{"type":"string","description":"One line: what will happen."},`+
				`"kind":{"type":"string","enum":["command","target","diff","text"],"description":"How to show detail."},`+
				`"detail":{"type":"string","description":"The command, target, unified diff or text."},`+
				`"tool":{"type":"string","description":"A tool of yours to run when approved (e.g. run_command)."},`+
				`"input":{"type":"object","description":"That tool's arguments."}`+
				`},"required":["title"],"additionalProperties":false}}},"required":["items"],"additionalProperties":false}`,
			func(in json.RawMessage) (any, error) {
				var r pause.ApprovalRequest
				if err := jsonarg.Decode(in, &r); err != nil {
					return nil, err
				}
				if r.Policy {
					return nil, fault.Invalid("policy is set by Rerun, not by the agent")
				}
				return r, r.Check()
			}, pause.Approval),
		pauseTool("request_connector",
			"Ask the person to connect an integration you need, with its setup form (fields such as a URL, an account, an "+
				"API token). Your turn ends here. Secret fields go straight into workspace variables; you get back the other "+
				"values and, for each secret, the ${VARIABLE} to reference.",
			`{"type":"object","properties":{`+
				`"connector":{"type":"string","description":"The integration: an app's id from search_apps (its own setup form is used, leave fields out), or a name, e.g. GitHub."},`+
				`"title":{"type":"string","description":"The card's title (default: Connect <connector>)."},"description":{"type":"string","description":"What it is for."},`+
				`"fields":{"type":"array","description":"The setup form's fields.","maxItems":20,"items":{"type":"object","properties":{`+
				`"name":{"type":"string","description":"lowercase_id"},"label":{"type":"string"},`+
				`"type":{"type":"string","enum":["text","url","secret","select"]},"required":{"type":"boolean"},`+
				`"options":{"type":"array","items":{"type":"string"}},"placeholder":{"type":"string"},"help":{"type":"string"}`+
				`},"required":["name"],"additionalProperties":false}}},"required":["connector"],"additionalProperties":false}`,
			func(in json.RawMessage) (any, error) {
				var r pause.ConnectorRequest
				if err := jsonarg.Decode(in, &r); err != nil {
					return nil, err
				}
				return r, r.Check()
			}, pause.Connector),
		pauseTool("request_credential",
			"Ask the person for an API key or password through a masked form. NEVER ask for a secret in the chat. The value "+
				"goes straight into the workspace variable you name; you only learn that it was filled, then reference it as "+
				"${NAME} in a command, its env, or a request header.",
			`{"type":"object","properties":{`+
				`"variable":{"type":"string","description":"Variable name, UPPER_CASE, e.g. STRIPE_API_KEY."},`+
				`"label":{"type":"string","description":"What it is, e.g. Stripe secret key."},`+
				`"description":{"type":"string","description":"What you will use it for."},`+
				`"url":{"type":"string","description":"Where the person can get it."}`+
				`},"required":["variable"],"additionalProperties":false}`,
			func(in json.RawMessage) (any, error) {
				var r pause.CredentialRequest
				if err := jsonarg.Decode(in, &r); err != nil {
					return nil, err
				}
				return r, r.Check()
			}, pause.Credential),
		{
			Name: "notify", Family: "human",
			Description: "Tell the person something and keep working: kind info, progress, done or error, a short title and an " +
				"optional body. It reaches their notifications; it is not a question (use ask_question to wait for an answer).",
			Schema: json.RawMessage(`{"type":"object","properties":{` +
				`"kind":{"type":"string","enum":["info","progress","done","error"],"description":"What sort of news it is."},` +
				`"title":{"type":"string","description":"One line."},"body":{"type":"string","description":"Details, optional."}` +
				`},"required":["kind","title"],"additionalProperties":false}`),
			Run: func(ctx context.Context, env *Env, input json.RawMessage) (string, error) {
				var in struct{ Kind, Title, Body string }
				if err := jsonarg.Decode(input, &in); err != nil {
					return "", err
				}
				if !slices.Contains([]string{"info", "progress", "done", "error"}, in.Kind) {
					return "", fault.Invalid("kind %q is unknown; use info, progress, done or error", in.Kind)
				}
				if strings.TrimSpace(in.Title) == "" {
					return "", fault.Invalid("title is empty; say what happened in one line")
				}
				if env.Notifier == nil {
					return "", fault.Invalid("notifications are not available here")
				}
				if err := env.Notifier.Notify(ctx, in.Kind, in.Title, in.Body); err != nil {
					return "", err
				}
				return "sent; keep working", nil
			},
		},
	}
}

// IsPause reports whether t ends the turn with a card for the person.
func (t Tool) IsPause() bool { return t.Pause != nil }

// Acts reports whether a call of the named tool changes something outside the
// conversation — what an ask-first switch holds for approval. Reads, queries
// and GETs never act.
func Acts(name string, input json.RawMessage) bool {
	switch name {
	case "write_file", "append_file", "delete_file", "run_command", "db_execute", "space_db_execute",
		"update_soul", "call_agent", "remember", "forget", "upsert_skill":
		return true
	case "fetch_url":
		var in struct {
			Method string `json:"method"`
		}
		json.Unmarshal(input, &in)
		return in.Method != "" && !strings.EqualFold(in.Method, "GET")
	}
	return false
}
