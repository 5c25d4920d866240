package template_test

import (
	"context"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/budget"
	"github.com/rerun-build/rerun-desktop/backend/template"
)

// A template suggests its agent's budget: packaging an agent keeps it, and
// an install takes the suggestion, the installer's change, or none.
func TestTemplateSuggestsABudgetTheInstallerAccepts(t *testing.T) {
	ctx := context.Background()
	src := plantAgent(t)
	suggested := budget.Limits{RunUSD: 0.5, DayUSD: 3}
	if _, err := src.ws.Budgets.SetAgent(ctx, src.agent.ID, budget.Update{RunUSD: &suggested.RunUSD, DayUSD: &suggested.DayUSD}); err != nil {
		t.Fatal(err)
	}
	tpl, err := src.ws.Templates.FromAgent(ctx, src.agent.ID, template.Patch{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opt  *budget.Limits
		want budget.Limits
	}{
		{"accepted as suggested", nil, suggested},
		{"changed by the installer", &budget.Limits{DayTokens: 100000}, budget.Limits{DayTokens: 100000}},
		{"cleared by the installer", &budget.Limits{}, budget.Limits{}},
	} {
		inst, err := src.ws.Templates.Install(ctx, tpl.ID, template.InstallOptions{Name: tc.name, Budget: tc.opt})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got, _ := src.ws.Budgets.Agent(ctx, inst.Agent.ID); got != tc.want {
			t.Errorf("%s: budget = %+v, want %+v", tc.name, got, tc.want)
		}
	}
	if _, err := src.ws.Templates.Install(ctx, tpl.ID, template.InstallOptions{Name: "bad", Budget: &budget.Limits{DayUSD: -1}}); err == nil {
		t.Errorf("a negative budget was accepted")
	}
}
