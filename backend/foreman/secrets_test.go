package foreman_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/foreman"
	"github.com/rerun-build/rerun-desktop/backend/secret"
	"github.com/rerun-build/rerun-desktop/backend/store/storetest"
	"github.com/rerun-build/rerun-desktop/backend/template"
	"github.com/rerun-build/rerun-desktop/backend/tool"
)

// A coworker the Foreman proposes or creates cannot carry a variable's
// value or a credential in its soul: refused before any card.
func TestCoworkerSoulRefusesSecrets(t *testing.T) {
	box, err := secret.NewBox(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	db := storetest.Open(t)
	vars, err := secret.NewVariables(db, box, "ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := vars.Set(context.Background(), "SHOP_TOKEN", "shop-token-0123456789"); err != nil {
		t.Fatal(err)
	}
	f := foreman.New(foreman.Deps{Variables: vars, Templates: template.New(template.Deps{DB: db, Dir: t.TempDir(), Workspace: "ws"})})
	tools, err := f.Tools(context.Background(), agent.Agent{Builtin: foreman.Kind})
	if err != nil {
		t.Fatal(err)
	}
	create, ok := tool.Find(tools, "create_coworker")
	if !ok {
		t.Fatal("no create_coworker")
	}
	for soul, want := range map[string]string{
		"# Clerk\nUse shop-token-0123456789.":          "write ${SHOP_TOKEN} instead",
		"# Clerk\nUse ghp_" + strings.Repeat("a1", 18): "looks like a GitHub token",
	} {
		in, _ := json.Marshal(map[string]any{"name": "Clerk", "role": "keeps orders", "soul": soul})
		if _, _, err := create.Approve(context.Background(), in); !errors.Is(err, fault.ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("soul %q: card err = %v, want %q", soul, err, want)
		}
		if _, err := create.Run(context.Background(), nil, in); !errors.Is(err, fault.ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("soul %q: run err = %v, want %q", soul, err, want)
		}
	}
}
