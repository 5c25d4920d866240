package connector

import (
	"net/url"
	"slices"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/secret"
)

// checkHosts refuses to connect an app whose configuration sends a
// variable to a host it may not be sent to (secret.Variables.CheckSend),
// before anything is sent: an http server's URL and headers go to the URL's
// host; a stdio server's command, arguments and env to the hosts of the
// URLs written in them. resolved is cn.Transport with its variables filled
// in.
func (s *Service) checkHosts(cn Connector, resolved Transport) error {
	c, ok := s.vars.(interface {
		CheckSend(texts []string, hosts ...string) error
	})
	if !ok || s.vars == nil {
		return nil
	}
	t := cn.Transport
	texts := []string{t.Command, t.URL}
	texts = append(texts, t.Args...)
	for _, k := range sortedKeys(t.Headers) {
		texts = append(texts, t.Headers[k])
	}
	for _, k := range sortedKeys(t.Env) {
		texts = append(texts, t.Env[k])
	}
	var hosts []string
	if t.Type == TransportStdio {
		for _, text := range append(slices.Clone(texts), append(append([]string{resolved.Command}, resolved.Args...), envValues(resolved.Env)...)...) {
			for _, h := range secret.URLHosts(text) {
				if !slices.Contains(hosts, h) {
					hosts = append(hosts, h)
				}
			}
		}
	} else if u, err := url.Parse(resolved.URL); err == nil && u.Host != "" {
		hosts = []string{u.Host}
	}
	if err := c.CheckSend(texts, hosts...); err != nil {
		return fault.Invalid("%s is not connected: %s", cn.Name, fault.Message(err))
	}
	return nil
}

func envValues(env map[string]string) []string {
	var out []string
	for _, k := range sortedKeys(env) {
		out = append(out, env[k])
	}
	return out
}
