// Package run executes agents. A run is a durable state machine in SQLite:
// every model turn, tool call, tool result, error and cancel is a step row
// committed before the next action, so after a crash a running run resumes
// from its last committed step, and a tool call that was in flight is reported
// to the model as interrupted instead of being repeated.
//
// Runs belong to sessions (conversation threads). Within one session runs go
// one at a time, in order; across sessions a worker pool runs many at once.
//
// The files follow one run from its start to its end:
//
//   - service.go: the Service, what it is wired with (Deps, Config).
//   - run.go: the Run record, its statuses and sources.
//   - send.go: Send, a message from chat or the API: its session and the
//     open-card rule; start.go: Start and StartTx queue a run; its input
//     step is written when it leaves the queue (inputStep).
//   - dispatch.go: Serve, resuming after a crash, dispatching queued runs
//     to workers (one per session), executing a run to its end.
//   - turn.go: loop, the model turns of one run.
//   - history.go: the conversation a turn sends, compacted when too long.
//   - budget.go: the spend limits every model call is capped to, the
//     reservations of calls in flight, the budget card and its answer.
//   - promptparts.go, source.go, brain.go: the system prompt's parts.
//   - toolturn.go: the tool calls of one model turn, and the cards
//     (pauses) they raise.
//   - tools.go: the agent's tools and running one tool call; images.go the
//     images a tool returns; env.go what a tool sees of the app.
//   - children.go: call_agent, an agent calling another, and waiting for
//     a called agent that waits for a person.
//   - pause.go: cards: opening, listing and answering them.
//   - settle.go: handing an answered card back to its run as it resumes
//     (an approved held call records its start first, so a crash during it
//     never runs it again); takeover.go the browser takeover card's answer.
//   - procs.go: the process groups of running shell commands, recorded in
//     call_processes and ended at the next start after a crash.
//   - connectors.go: the apps installed on an agent, their tools, skills
//     and setup cards.
//   - ask.go, scripted.go: cards raised without a model turn.
//   - step.go: the step kinds; record.go commits steps and ends runs.
//   - query.go: reading runs (Get, List, Wait, Activity, Usage);
//     cancel.go stopping them; session.go sessions; summary.go runs of
//     other devices.
package run
