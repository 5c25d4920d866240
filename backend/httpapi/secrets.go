package httpapi

import (
	"net/http"

	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// allowCredentialLike is the query parameter with which the app stores text
// that only looks like a credential, after the person confirmed it is none
// (the refusal carries code credential_like). A variable's value is refused
// whatever it says.
const allowCredentialLike = "allow_credential_like"

// refuseSecrets refuses text to be stored where agents read it (a soul, a
// skill, a memory, a Brain page, an instruction) that holds a variable's
// value or, unless the request allows it, what looks like a credential
// (secret.Variables.CheckStored). nil texts are not being changed.
func refuseSecrets(ws *workspace.Workspace, r *http.Request, where, thing string, texts ...*string) error {
	allow := r.URL.Query().Get(allowCredentialLike) == "true"
	for _, t := range texts {
		if t == nil {
			continue
		}
		if err := ws.Variables.CheckStored(where, thing, *t, allow); err != nil {
			return err
		}
	}
	return nil
}
