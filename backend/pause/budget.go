package pause

import (
	"context"
	"fmt"
	"math"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// Budget is the kind of a card that a run raises when its next model call
// would pass a spend limit. No agent tool raises it: the run engine does,
// before the call, and package run applies the answer (more for this run, a
// higher limit, or stop).
const Budget = "budget"

// Budget card scopes, periods, units and choices.
const (
	ScopeRun       = "run"       // the limit of one run (the agent's or the workspace's per-run limit)
	ScopeAgent     = "agent"     // the agent's daily limit
	ScopeWorkspace = "workspace" // the workspace's daily limit

	PeriodRun = "run"
	PeriodDay = "day"

	UnitTokens = "tokens"
	UnitUSD    = "usd"

	BudgetAllow = "allow" // Amount more for this run only
	BudgetRaise = "raise" // set the limit to Amount
	BudgetStop  = "stop"  // end the run
)

var budgetKind = Define(Def[BudgetRequest, BudgetAnswer]{
	Name:      Budget,
	Tool:      Tool{Name: "budget"},
	Check:     (*BudgetRequest).Check,
	Summarize: func(b BudgetRequest) (string, string) { return "Reached its budget", b.Describe() },
	Reply: func(_ context.Context, b BudgetRequest, decode func(any) error, _ SetVariable) (BudgetAnswer, error) {
		var a BudgetAnswer
		if err := decode(&a); err != nil {
			return a, err
		}
		return a, b.CheckAnswer(&a)
	},
	Text: func(b BudgetRequest, a BudgetAnswer) string {
		switch a.Choice {
		case BudgetAllow:
			return fmt.Sprintf("The person allowed %s more for this run.", b.Amount(a.Amount))
		case BudgetRaise:
			return fmt.Sprintf("The person raised the limit to %s.", b.Amount(a.Amount))
		}
		return "The person stopped the run at its budget."
	},
})

// BudgetRequest says which limit the run reached: what was spent (with
// what the next call needs) against what limit.
type BudgetRequest struct {
	Scope   string `json:"scope"`  // ScopeRun, ScopeAgent or ScopeWorkspace
	Period  string `json:"period"` // PeriodRun or PeriodDay
	Unit    string `json:"unit"`   // UnitTokens or UnitUSD
	AgentID string `json:"agent_id"`
	// Owner says whose limit it is: "agent" or "workspace" (a per-run
	// limit is set on either).
	Owner string  `json:"owner"`
	Day   string  `json:"day,omitempty"` // YYYY-MM-DD of a daily limit
	Limit float64 `json:"limit"`
	Spent float64 `json:"spent"`
	// Need is about what the next model call would take (its input and a
	// useful answer), so a choice can be sized to let it through.
	Need float64 `json:"need"`
	// SuggestMore and SuggestLimit are the card's proposals for "allow N
	// more" and "raise the limit to …".
	SuggestMore  float64 `json:"suggest_more"`
	SuggestLimit float64 `json:"suggest_limit"`
}

// BudgetAnswer is the person's choice. Amount is what more to allow
// (allow) or the new limit (raise), in the request's unit; 0 for stop.
type BudgetAnswer struct {
	Choice string  `json:"choice"`
	Amount float64 `json:"amount"`
}

// Amount writes v in the request's unit.
func (b BudgetRequest) Amount(v float64) string {
	if b.Unit == UnitUSD {
		return fmt.Sprintf("$%.2f", v)
	}
	return fmt.Sprintf("%d tokens", int64(v))
}

// Describe is the card's line: what was spent against what limit.
func (b BudgetRequest) Describe() string {
	whose := "this run's limit"
	switch {
	case b.Period == PeriodDay && b.Owner == ScopeWorkspace:
		whose = "the workspace's daily limit"
	case b.Period == PeriodDay:
		whose = "the agent's daily limit"
	case b.Owner == ScopeWorkspace:
		whose = "the workspace's per-run limit"
	case b.Owner == ScopeAgent:
		whose = "the agent's per-run limit"
	}
	return fmt.Sprintf("Spent %s of %s (%s); the next model call needs about %s more.",
		b.Amount(b.Spent), whose, b.Amount(b.Limit), b.Amount(b.Need))
}

// Check validates a budget card.
func (b *BudgetRequest) Check() error {
	switch {
	case b.Scope != ScopeRun && b.Scope != ScopeAgent && b.Scope != ScopeWorkspace:
		return fault.Invalid("budget scope %q is unknown; use run, agent or workspace", b.Scope)
	case b.Period != PeriodRun && b.Period != PeriodDay:
		return fault.Invalid("budget period %q is unknown; use run or day", b.Period)
	case b.Unit != UnitTokens && b.Unit != UnitUSD:
		return fault.Invalid("budget unit %q is unknown; use tokens or usd", b.Unit)
	case b.Owner != ScopeAgent && b.Owner != ScopeWorkspace:
		return fault.Invalid("budget owner %q is unknown; use agent or workspace", b.Owner)
	}
	for _, v := range []float64{b.Limit, b.Spent, b.Need, b.SuggestMore, b.SuggestLimit} {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return fault.Invalid("a budget card's amounts are numbers of 0 or more")
		}
	}
	return nil
}

// CheckAnswer validates a choice: allow a positive amount more, raise the
// limit above what was spent, or stop.
func (b BudgetRequest) CheckAnswer(a *BudgetAnswer) error {
	if math.IsNaN(a.Amount) || math.IsInf(a.Amount, 0) {
		return fault.Invalid("amount is not a number")
	}
	if b.Unit == UnitTokens {
		a.Amount = math.Floor(a.Amount)
	}
	switch a.Choice {
	case BudgetAllow:
		if a.Amount <= 0 {
			return fault.Invalid("allow how much more? give an amount above 0 (%s)", b.Unit)
		}
		if b.Unit == UnitTokens && a.Amount > 1e12 || b.Unit == UnitUSD && a.Amount > 1e6 {
			return fault.Invalid("amount %v is too large", a.Amount)
		}
	case BudgetRaise:
		if a.Amount <= b.Spent {
			return fault.Invalid("raise the limit above what was already spent (%s); %s would stop the run again at once", b.Amount(b.Spent), b.Amount(a.Amount))
		}
		if b.Unit == UnitTokens && a.Amount > 1e12 || b.Unit == UnitUSD && a.Amount > 1e6 {
			return fault.Invalid("limit %v is too large", a.Amount)
		}
	case BudgetStop:
		a.Amount = 0
	default:
		return fault.Invalid("choice %q is unknown; answer allow (with amount: how much more), raise (amount: the new limit) or stop", a.Choice)
	}
	return nil
}
