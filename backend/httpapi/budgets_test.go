package httpapi_test

import (
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/budget"
	"github.com/rerun-build/rerun-desktop/backend/httpapi"
)

// Budgets over real HTTP: the workspace's and an agent's limits, set and
// read back with their spend per day; bad limits say what to fix.
func TestBudgets(t *testing.T) {
	e := newEnv(t)
	base := "/api/workspaces/" + e.ws
	id := e.newAgent(t, "Saver")
	var l budget.Limits
	if got := e.do(t, "PATCH", base+"/budget", `{"day_usd": 5}`, &l); got != 200 || l.DayUSD != 5 {
		t.Fatalf("set the workspace's daily budget: %d %+v", got, l)
	}
	if got := e.do(t, "PATCH", base+"/agents/"+id+"/budget", `{"run_tokens": 50000, "day_tokens": 200000}`, &l); got != 200 ||
		l.RunTokens != 50000 || l.DayTokens != 200000 {
		t.Fatalf("set the agent's budget: %d %+v", got, l)
	}
	var b httpapi.Budget
	if got := e.do(t, "GET", base+"/agents/"+id+"/budget?days=7", "", &b); got != 200 || b.Limits.RunTokens != 50000 || len(b.Days) != 7 {
		t.Fatalf("read the agent's budget: %d %+v", got, b)
	}
	if got := e.do(t, "GET", base+"/budget", "", &b); got != 200 || b.Limits.DayUSD != 5 || len(b.Days) != 30 {
		t.Fatalf("read the workspace's budget: %d %+v", got, b)
	}
	var fail struct{ Error string }
	for body, want := range map[string]string{`{"day_usd": -1}`: "from 0", `{"day_tokens": "lots"}`: "day_tokens", `{"day_dollars": 3}`: "day_dollars"} {
		if got := e.do(t, "PATCH", base+"/budget", body, &fail); got != 400 || !strings.Contains(fail.Error, want) {
			t.Errorf("PATCH %s: %d %q, want 400 saying %q", body, got, fail.Error, want)
		}
	}
	if got := e.do(t, "PATCH", base+"/agents/ag_nobody/budget", `{"day_usd": 1}`, &fail); got != 404 {
		t.Errorf("an unknown agent: %d", got)
	}
}
