package tool

import (
	"maps"
	"slices"
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/fault"

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

// checkCommandHosts refuses a command that would send a variable limited
// to hosts (written in the command or in env) anywhere else: to the URLs
// (scheme://host…) in the command or in env once variables are filled in,
// or to the destinations of the network programs it runs (curl host, ssh
// user@host, git clone host:repo; commandDestinations). When such a
// variable is used and a network program's destination is not written in
// the command (curl $URL, git push origin), it is refused too: the agent is
// told to write the URL. A command that uses no such variable is not read.
func (e *Env) checkCommandHosts(command string, env map[string]string, resolvedCommand string, resolvedEnv map[string]string) error {
	texts := []string{command}
	for _, k := range slices.Sorted(maps.Keys(env)) {
		texts = append(texts, env[k])
	}
	b, ok := e.Vars.(interface{ HostBound(texts []string) []string })
	if !ok {
		return nil
	}
	bound := b.HostBound(texts)
	if len(bound) == 0 {
		return nil
	}
	// The command as written too: a value quoted where it stands may hide
	// the host after it (ssh://${USER}@host).
	hosts := secret.URLHosts(command)
	add := func(hs ...string) {
		for _, h := range hs {
			if !slices.Contains(hosts, h) {
				hosts = append(hosts, h)
			}
		}
	}
	add(secret.URLHosts(resolvedCommand)...)
	reach := commandDestinations(resolvedCommand)
	for _, k := range slices.Sorted(maps.Keys(resolvedEnv)) {
		add(secret.URLHosts(resolvedEnv[k])...)
		reach.assignment(k, resolvedEnv[k])
	}
	add(reach.hosts...)
	if err := e.CheckSend(texts, hosts...); err != nil {
		return err
	}
	if len(reach.unknown) > 0 {
		name := bound[0]
		allowed := ""
		if h, ok := e.Vars.(interface{ Hosts(name string) []string }); ok {
			allowed = strings.Join(h.Hosts(name), ", ")
		}
		example := strings.TrimPrefix(strings.Split(allowed, ", ")[0], "*.")
		return fault.Invalid("the variable %s may only be sent to %s, and this command does not say where it sends it: %s. Nothing was run. Write the destination as a URL with its scheme in the command itself, e.g. curl https://%s/…, not in a shell variable, a remote name or a config file",
			name, allowed, strings.Join(reach.unknown, "; "), example)
	}
	return nil
}
