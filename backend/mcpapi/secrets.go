package mcpapi

import "github.com/rerun-build/rerun-desktop/backend/workspace"

// refuseSecrets refuses text to be stored where agents read it (a soul, a
// skill, an instruction) that holds a variable's value or what looks like a
// credential (secret.Variables.CheckStored). Through the API nobody can
// say it is no secret: only a person can, in the app.
func refuseSecrets(w *workspace.Workspace, where, thing string, text *string) error {
	if text == nil {
		return nil
	}
	return w.Variables.CheckStored(where, thing, *text, false)
}
