package connector

import (
	"net/url"
	"slices"
	"strings"

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

// checkSignIn refuses a browser sign-in step that would send the variables
// texts reference to the host of to when one may not go there.
func (s *Service) checkSignIn(cn Connector, texts []string, to string) error {
	c, ok := s.vars.(interface {
		CheckSend(texts []string, hosts ...string) error
	})
	if !ok || s.vars == nil || len(texts) == 0 {
		return nil
	}
	u, err := url.Parse(to)
	if err != nil || u.Host == "" {
		return nil // nothing is sent to a URL without a host
	}
	if err := c.CheckSend(texts, u.Host); err != nil {
		return fault.Invalid("the sign-in to %s did not start: %s", cn.Name, fault.Message(err))
	}
	return nil
}

// clientRefs are the references to an app's own OAuth client variables.
func clientRefs(cn Connector) []string {
	var out []string
	if cn.OAuth != nil {
		for _, n := range []string{cn.OAuth.ClientIDVar, cn.OAuth.ClientSecretVar} {
			if n != "" {
				out = append(out, "${"+n+"}")
			}
		}
	}
	return out
}

// carried are references to the variables of cn (its client, its URL and
// headers) whose value the URL u holds, as written or query-escaped.
func (s *Service) carried(cn Connector, u string) []string {
	names := map[string]bool{}
	for _, ref := range clientRefs(cn) {
		names[ref[2:len(ref)-1]] = true
	}
	texts := []string{cn.Transport.URL}
	for _, k := range sortedKeys(cn.Transport.Headers) {
		texts = append(texts, cn.Transport.Headers[k])
	}
	for _, text := range texts {
		_, _ = secret.Expand(text, func(name string) (string, bool) {
			names[name] = true
			return "", true
		}, nil)
	}
	decoded, _ := url.QueryUnescape(u)
	var out []string
	for _, n := range sortedKeys(names) {
		v, ok := s.lookup(n)
		if ok && v != "" && (strings.Contains(u, v) || strings.Contains(decoded, v) || strings.Contains(u, url.QueryEscape(v)) || strings.Contains(u, url.PathEscape(v))) {
			out = append(out, "${"+n+"}")
		}
	}
	return out
}
