package run

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/budget"
	"github.com/rerun-build/rerun-desktop/backend/llm"
	"github.com/rerun-build/rerun-desktop/backend/pause"
	"github.com/rerun-build/rerun-desktop/backend/store"
)

// Budgets are enforced before every model call (a turn, a compaction):
// under the ledger's lock the call's input is estimated from above, what
// the run, the agent's day and the workspace's day have spent is read from
// the committed steps, plus what calls in flight have reserved, and the
// call's max_tokens is capped to what the tightest limit leaves. The call's
// worst case is then reserved until its step is committed, so concurrent
// runs of one agent can never together pass a limit. When a limit leaves
// less than a useful answer the run pauses on a budget card instead.

// minReply is the smallest answer worth a call: with less left, the run
// pauses on a budget card.
const minReply = 256

// imageTokens is an upper bound of what one image costs as input (both
// APIs scale images down to about 1.2 megapixels, about 1,600 tokens).
const imageTokens = 2000

// ledger holds what calls in flight have reserved.
type ledger struct {
	mu    sync.Mutex
	holds map[*hold]struct{}
	// cards serialises opening budget cards, so that runs hitting one
	// daily limit at once raise one card and the others queue behind it.
	cards sync.Mutex
}

type hold struct {
	runID, agentID string
	tokens         int64
	usd            float64
}

// estimateInput is an upper bound of a request's input tokens: at most one
// token per two bytes of text (ordinary text runs about four), plus the
// framing of each part and a fixed cost per image.
func estimateInput(system string, msgs []llm.Message, tools []llm.ToolSpec) int {
	n := len(system) + 64
	for _, m := range msgs {
		n += 16
		for _, p := range m.Parts {
			n += len(p.Text) + len(p.Input) + len(p.Output) + len(p.ToolName) + len(p.ToolCallID) + 32
			n += 2 * imageTokens * len(p.Images)
		}
	}
	for _, t := range tools {
		n += len(t.Name) + len(t.Description) + len(t.InputSchema) + 32
	}
	return (n + 1) / 2
}

// prices are a model's USD per token, the input price being the dearest
// of plain and cache-write input; known is false for a model with no price.
type prices struct {
	in, out float64
	known   bool
}

func (s *Service) pricesOf(model string) prices {
	in, known := s.models.Cost(model, llm.Usage{InputTokens: 1_000_000})
	if !known {
		return prices{}
	}
	write, _ := s.models.Cost(model, llm.Usage{CacheWriteTokens: 1_000_000})
	out, _ := s.models.Cost(model, llm.Usage{OutputTokens: 1_000_000})
	return prices{in: max(in, write) / 1e6, out: out / 1e6, known: true}
}

// spend is what has been used, in tokens and USD.
type spend struct {
	tokens int64
	usd    float64
}

// bound is one limit that applies to a call.
type bound struct {
	owner, period, unit string
	limit               float64 // with what the person allowed this run more
	base                float64 // as set
	used                spend   // committed
	held                spend   // reserved by calls in flight
}

// errBudget is a model call that a limit stops: the run pauses on req.
type errBudget struct{ req pause.BudgetRequest }

func (e *errBudget) Error() string { return "budget reached: " + e.req.Describe() }

// dayStart is the start of today in the person's time zone, and tomorrow's.
func (s *Service) dayStart() (time.Time, time.Time, string) {
	now := s.cfg.Now().In(s.cfg.Location)
	start := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, s.cfg.Location)
	return start, start.AddDate(0, 0, 1), start.Format("2006-01-02")
}

// daySpend is what the steps that ended in [from, to) used: of one agent,
// or of the whole workspace when agentID is "".
func (s *Service) daySpend(ctx context.Context, agentID string, from, to time.Time) (spend, error) {
	q := `SELECT coalesce(sum(st.input_tokens + st.output_tokens + st.cache_tokens), 0), coalesce(sum(st.cost_usd), 0)
		FROM steps st JOIN runs r ON r.id = st.run_id
		WHERE st.ended_at >= ? AND st.ended_at < ? AND (st.input_tokens + st.output_tokens + st.cache_tokens > 0 OR st.cost_usd > 0)`
	args := []any{store.FormatTime(from), store.FormatTime(to)}
	if agentID != "" {
		q += ` AND r.agent_id = ?`
		args = append(args, agentID)
	}
	var sp spend
	if err := s.db.QueryRowContext(ctx, q, args...).Scan(&sp.tokens, &sp.usd); err != nil {
		return spend{}, fmt.Errorf("read the day's spend: %w", err)
	}
	return sp, nil
}

// bounds are the limits that apply to r's next call, with their spend.
func (s *Service) bounds(ctx context.Context, r *Run, ws, ag budget.Limits) ([]bound, string, error) {
	var grant spend
	err := s.db.QueryRowContext(ctx, `SELECT tokens, usd FROM budget_grants WHERE run_id = ?`, r.ID).Scan(&grant.tokens, &grant.usd)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, "", fmt.Errorf("read the run's allowance: %w", err)
	}
	var run spend
	if err := s.db.QueryRowContext(ctx, `SELECT input_tokens + output_tokens + cache_read_tokens + cache_write_tokens, cost_usd FROM runs WHERE id = ?`,
		r.ID).Scan(&run.tokens, &run.usd); err != nil {
		return nil, "", fmt.Errorf("read the run's spend: %w", err)
	}
	from, to, day := s.dayStart()
	var agentDay, wsDay spend
	if ag.DayTokens > 0 || ag.DayUSD > 0 {
		if agentDay, err = s.daySpend(ctx, r.AgentID, from, to); err != nil {
			return nil, "", err
		}
	}
	if ws.DayTokens > 0 || ws.DayUSD > 0 {
		if wsDay, err = s.daySpend(ctx, "", from, to); err != nil {
			return nil, "", err
		}
	}
	var heldRun, heldAgent, heldAll spend
	for h := range s.ledger.holds {
		add := func(sp *spend) { sp.tokens += h.tokens; sp.usd += h.usd }
		add(&heldAll)
		if h.agentID == r.AgentID {
			add(&heldAgent)
		}
		if h.runID == r.ID {
			add(&heldRun)
		}
	}
	var out []bound
	both := func(owner, period string, tokens int64, usd float64, used, held spend) {
		if tokens > 0 {
			out = append(out, bound{owner, period, pause.UnitTokens, float64(tokens + grant.tokens), float64(tokens), used, held})
		}
		if usd > 0 {
			out = append(out, bound{owner, period, pause.UnitUSD, usd + grant.usd, usd, used, held})
		}
	}
	both(pause.ScopeAgent, pause.PeriodRun, ag.RunTokens, ag.RunUSD, run, heldRun)
	both(pause.ScopeWorkspace, pause.PeriodRun, ws.RunTokens, ws.RunUSD, run, heldRun)
	both(pause.ScopeAgent, pause.PeriodDay, ag.DayTokens, ag.DayUSD, agentDay, heldAgent)
	both(pause.ScopeWorkspace, pause.PeriodDay, ws.DayTokens, ws.DayUSD, wsDay, heldAll)
	return out, day, nil
}

// reserve caps a call of model whose input is at most in tokens: it
// returns the max_tokens to send (at most want) and the release to call
// once the call's step is committed (or the call failed). A limit that
// leaves less than a useful answer returns an *errBudget.
func (s *Service) reserve(ctx context.Context, r *Run, model string, in, want int) (int, func(), error) {
	noop := func() {}
	if s.budgets == nil {
		return want, noop, nil
	}
	s.ledger.mu.Lock()
	defer s.ledger.mu.Unlock()
	ws, ag, err := s.budgets.Both(ctx, r.AgentID)
	if err != nil {
		return 0, noop, err
	}
	if !ws.Any() && !ag.Any() {
		return want, noop, nil
	}
	bs, day, err := s.bounds(ctx, r, ws, ag)
	if err != nil {
		return 0, noop, err
	}
	pr := s.pricesOf(model)
	capped := want
	var tight *bound
	for i := range bs {
		b := &bs[i]
		var c int
		switch {
		case b.unit == pause.UnitTokens:
			c = int(math.Floor(b.limit - float64(b.used.tokens+b.held.tokens) - float64(in)))
		case !pr.known:
			continue // a model with no price: only its token limits bind
		case pr.out <= 0:
			if b.limit-b.used.usd-b.held.usd-float64(in)*pr.in >= 0 {
				continue
			}
			c = -1
		default:
			c = int(math.Floor((b.limit - b.used.usd - b.held.usd - float64(in)*pr.in) / pr.out))
		}
		if c < capped {
			capped, tight = c, b
		}
	}
	if capped < min(minReply, want) {
		return 0, noop, &errBudget{s.budgetRequest(r, *tight, day, in, pr)}
	}
	h := &hold{runID: r.ID, agentID: r.AgentID, tokens: int64(in + capped)}
	if pr.known {
		h.usd = float64(in)*pr.in + float64(capped)*pr.out
	}
	if s.ledger.holds == nil {
		s.ledger.holds = map[*hold]struct{}{}
	}
	s.ledger.holds[h] = struct{}{}
	return capped, func() {
		s.ledger.mu.Lock()
		delete(s.ledger.holds, h)
		s.ledger.mu.Unlock()
	}, nil
}

// budgetRequest is the card for the limit b that stops a call.
func (s *Service) budgetRequest(r *Run, b bound, day string, in int, pr prices) pause.BudgetRequest {
	req := pause.BudgetRequest{Scope: pause.ScopeRun, Period: b.period, Unit: b.unit, AgentID: r.AgentID, Owner: b.owner, Limit: b.base}
	if b.period == pause.PeriodDay {
		req.Scope, req.Day = b.owner, day
	}
	need := float64(in + minReply)
	req.Spent = float64(b.used.tokens)
	round := func(v float64) float64 { return math.Ceil(v/1000) * 1000 }
	if b.unit == pause.UnitUSD {
		need = float64(in)*pr.in + minReply*pr.out
		req.Spent = math.Round(b.used.usd*1e4) / 1e4
		round = func(v float64) float64 { return math.Ceil(v*100) / 100 }
	}
	req.Need = round(need)
	req.SuggestMore = round(max(need*2, b.base/2))
	req.SuggestLimit = round(max(b.base*2, req.Spent+need*2))
	return req
}

// onBudget pauses r on the budget card of e. A run that reaches a daily
// limit for which a card is open already goes back to the queue instead
// and waits behind that card (Queued); a called agent always raises its
// own, as its caller waits on it.
func (s *Service) onBudget(ctx context.Context, r *Run, e *errBudget) (Status, error) {
	bg := context.WithoutCancel(ctx)
	s.ledger.cards.Lock()
	defer s.ledger.cards.Unlock()
	if e.req.Period == pause.PeriodDay && r.ParentRunID == "" {
		var n int
		if err := s.db.QueryRowContext(bg, `SELECT count(*) FROM pauses WHERE kind = 'budget' AND status = 'open'
			AND json_extract(request, '$.scope') = ? AND (? = 'workspace' OR agent_id = ?)`,
			e.req.Scope, e.req.Scope, r.AgentID).Scan(&n); err != nil {
			return "", fmt.Errorf("find budget cards: %w", err)
		}
		if n > 0 {
			if _, err := s.db.ExecContext(bg, `UPDATE runs SET status = 'queued' WHERE id = ? AND status = 'running'`, r.ID); err != nil {
				return "", fmt.Errorf("queue run %s behind its budget card: %w", r.ID, err)
			}
			r.Status = Queued
			s.publish("run.updated", *r)
			s.log.Info("run waits behind a budget card", "run", r.ID, "agent", r.AgentID, "scope", e.req.Scope)
			return Queued, nil
		}
	}
	if _, err := s.openPause(bg, r, pause.Budget, "", e.req, r.Output); err != nil {
		return "", err
	}
	return Paused, nil
}

// budgetWaits is the dispatch condition that holds back the queued runs of
// an agent (alias r) while a budget card of its daily limit, or of the
// workspace's, is open.
const budgetWaits = ` AND NOT EXISTS (SELECT 1 FROM pauses bp WHERE bp.kind = 'budget' AND bp.status = 'open'
	AND (json_extract(bp.request, '$.scope') = 'workspace'
		OR (json_extract(bp.request, '$.scope') = 'agent' AND bp.agent_id = r.agent_id)))`

// answerBudget applies a budget card's answer inside the answer's
// transaction: more for this run, or a higher limit. A stop (or a
// dismissal) ends the run when it resumes (budgetStopped).
func (s *Service) answerBudget(ctx context.Context, tx *sql.Tx, p Pause, stored any) error {
	a, ok := stored.(pause.BudgetAnswer)
	if !ok {
		return nil // dismissed: stops the run as it resumes
	}
	req, err := pause.Decode[pause.BudgetRequest](p.Request)
	if err != nil {
		return err
	}
	switch a.Choice {
	case pause.BudgetAllow:
		tokens, usd := int64(0), 0.0
		if req.Unit == pause.UnitTokens {
			tokens = int64(a.Amount)
		} else {
			usd = a.Amount
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO budget_grants (run_id, tokens, usd) VALUES (?, ?, ?)
			ON CONFLICT (run_id) DO UPDATE SET tokens = tokens + excluded.tokens, usd = usd + excluded.usd`, p.RunID, tokens, usd)
		return err
	case pause.BudgetRaise:
		if s.budgets == nil {
			return errors.New("this workspace keeps no budgets")
		}
		var u budget.Update
		tokens, usd := int64(a.Amount), a.Amount
		switch {
		case req.Period == pause.PeriodRun && req.Unit == pause.UnitTokens:
			u.RunTokens = &tokens
		case req.Period == pause.PeriodRun:
			u.RunUSD = &usd
		case req.Unit == pause.UnitTokens:
			u.DayTokens = &tokens
		default:
			u.DayUSD = &usd
		}
		owner := p.AgentID
		if req.Owner == pause.ScopeWorkspace {
			owner = ""
		}
		_, err := s.budgets.SetTx(ctx, tx, owner, u)
		return err
	}
	return nil
}

// budgetStopped ends, as it resumes, a run whose budget card the person
// answered with stop or dismissed: it reports whether it did.
func (s *Service) budgetStopped(ctx context.Context, r *Run) (bool, error) {
	ps, err := store.Query(ctx, s.db, scanPause, `SELECT `+pauseColumns+` FROM pauses
		WHERE run_id = ? AND kind = 'budget' AND status IN ('answered', 'dismissed') AND settled = 0`, r.ID)
	if err != nil {
		return false, fmt.Errorf("read budget cards: %w", err)
	}
	stop := false
	for _, p := range ps {
		if p.Status == pause.Dismissed {
			stop = true
			continue
		}
		var a pause.BudgetAnswer
		if err := json.Unmarshal(p.Answer, &a); err != nil {
			return false, fmt.Errorf("read the answer to budget card %s: %w", p.ID, err)
		}
		stop = stop || a.Choice == pause.BudgetStop
	}
	if !stop {
		return false, nil
	}
	for _, p := range ps {
		if err := s.record(ctx, r, StepResume, ResumeData{PauseID: p.ID, Status: p.Status}, s.now(), nil); err != nil {
			return false, err
		}
		if _, err := s.db.ExecContext(ctx, `UPDATE pauses SET settled = 1 WHERE id = ?`, p.ID); err != nil {
			return false, fmt.Errorf("settle budget card %s: %w", p.ID, err)
		}
	}
	return true, nil
}

// DaySpend is what one day's model calls used, by the steps that ended in
// it: the figures budgets are held to.
type DaySpend struct {
	Day     string  `json:"day"` // YYYY-MM-DD in the user's time zone
	Tokens  int64   `json:"tokens"`
	CostUSD float64 `json:"cost_usd"`
}

// Spend returns the last days of spend, one entry per day, oldest first,
// days without spend included: of one agent, or of the whole workspace
// when agentID is "".
func (s *Service) Spend(ctx context.Context, agentID string, days int) ([]DaySpend, error) {
	if days <= 0 || days > 366 {
		days = 30
	}
	_, end, _ := s.dayStart()
	start := end.AddDate(0, 0, -days)
	out := make([]DaySpend, days)
	index := map[string]int{}
	for i := range out {
		out[i].Day = start.AddDate(0, 0, i).Format("2006-01-02")
		index[out[i].Day] = i
	}
	q := `SELECT st.ended_at, st.input_tokens + st.output_tokens + st.cache_tokens, st.cost_usd
		FROM steps st JOIN runs r ON r.id = st.run_id
		WHERE st.ended_at >= ? AND st.ended_at < ? AND (st.input_tokens + st.output_tokens + st.cache_tokens > 0 OR st.cost_usd > 0)`
	args := []any{store.FormatTime(start), store.FormatTime(end)}
	if agentID != "" {
		q += ` AND r.agent_id = ?`
		args = append(args, agentID)
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read spend: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var at string
		var tokens int64
		var usd float64
		if err := rows.Scan(&at, &tokens, &usd); err != nil {
			return nil, err
		}
		if i, ok := index[store.ParseTime(at).In(s.cfg.Location).Format("2006-01-02")]; ok {
			out[i].Tokens += tokens
			out[i].CostUSD += usd
		}
	}
	return out, rows.Err()
}
