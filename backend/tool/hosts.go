package tool

import (
	"maps"
	"slices"

	"github.com/rerun-build/rerun-desktop/backend/secret"
)

// CheckSend refuses texts (as written, ${NAME} not yet filled in) going to
// hosts when a variable they name may not be sent there
// (secret.Variables.CheckSend). Vars is a *secret.Variables in the app.
func (e *Env) CheckSend(texts []string, hosts ...string) error {
	if c, ok := e.Vars.(interface {
		CheckSend(texts []string, hosts ...string) error
	}); ok {
		return c.CheckSend(texts, hosts...)
	}
	return nil
}

// checkCommandHosts refuses a command whose URLs (scheme://host…, in the
// command or its env once variables are filled in) reach a host that a
// variable it uses, in the command or in env, may not be sent to. A
// command without URLs is not checked here: where it connects is not
// written in it.
func (e *Env) checkCommandHosts(command string, env map[string]string, resolvedCommand string, resolvedEnv []string) error {
	// The command as written too: a value quoted where it stands may hide
	// the host after it (ssh://${USER}@host).
	hosts := secret.URLHosts(command)
	for _, v := range append([]string{resolvedCommand}, resolvedEnv...) {
		for _, h := range secret.URLHosts(v) {
			if !slices.Contains(hosts, h) {
				hosts = append(hosts, h)
			}
		}
	}
	texts := []string{command}
	for _, k := range slices.Sorted(maps.Keys(env)) {
		texts = append(texts, env[k])
	}
	return e.CheckSend(texts, hosts...)
}
