package secret

import "github.com/rerun-build/rerun-desktop/backend/fault"

// CheckStored refuses text about to be stored where agents and models read
// it (a soul, a skill, a Brain page, a memory, an instruction): the value of
// a variable or of one of the app's own secrets, in any form Redact finds;
// and, unless allowCredentialLike (a person confirmed it is none),
// credential-shaped text (CheckCredential). where names the place ("the
// soul"), thing what never carries a secret ("a soul"). v may be nil: then
// only the shape is checked.
func (v *Variables) CheckStored(where, thing, text string, allowCredentialLike bool) error {
	if v != nil {
		if name, found := v.redactor.Load().Find(text); found {
			if v.Has(name) {
				return fault.Invalid("%s holds the value of the variable %s; %s never carries a secret's value: write ${%s} instead, and the value is filled in only where a command or request uses it", where, name, thing, name)
			}
			return fault.Invalid("%s holds the value of %s, a secret of the app itself; %s never carries it: remove it", where, name, thing)
		}
	}
	if allowCredentialLike {
		return nil
	}
	return CheckCredential(where, thing, text)
}
