package connector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// authTimeout is how long a started browser sign-in waits for its redirect.
const authTimeout = 15 * time.Minute

// authFlow is a browser sign-in under way.
type authFlow struct {
	connectorID string
	handler     *transport.OAuthHandler
	tokens      *transport.MemoryTokenStore
	verifier    string
	redirectURI string
	expires     time.Time
}

// tokenBlob is what an app's token variable holds: the token, and the
// client it was issued to (registered dynamically, or the app's own), so
// it can be refreshed.
type tokenBlob struct {
	ClientID     string          `json:"client_id"`
	ClientSecret string          `json:"client_secret,omitempty"`
	AuthMethod   string          `json:"token_endpoint_auth_method,omitempty"`
	RedirectURI  string          `json:"redirect_uri,omitempty"`
	Token        transport.Token `json:"token"`
}

// StartAuth begins the browser sign-in (MCP authorization: OAuth 2.1 with
// PKCE, dynamic client registration when the server offers it) of an app
// whose auth is oauth. It returns the URL to open in the person's browser;
// the provider then redirects to redirectURI — the app's loopback callback,
// e.g. http://127.0.0.1:<port>/oauth/callback — with code
// and state, which the callback hands to FinishAuth. The state is the
// callback's only credential: the route must not require the UI token.
func (s *Service) StartAuth(ctx context.Context, id, redirectURI string) (string, error) {
	cn, err := s.Get(ctx, id)
	if err != nil {
		return "", err
	}
	if cn.Auth != AuthOAuth {
		return "", fault.Invalid("%s does not use a browser sign-in; fill its setup form instead", cn.Name)
	}
	if u, err := url.Parse(redirectURI); err != nil || u.Host == "" || u.Scheme != "http" && u.Scheme != "https" {
		return "", fault.Invalid("redirect URI %q must be an http(s) URL", redirectURI)
	}
	serverURL, err := s.resolve(cn.Transport.URL)
	if err != nil {
		return "", err
	}
	// Discovery reads the server's metadata at its URL (the query left out).
	if err := s.checkSignIn(cn, []string{cn.Transport.URL}, serverURL); err != nil {
		return "", err
	}
	cfg, err := s.oauthClient(cn)
	if err != nil {
		return "", err
	}
	tokens := transport.NewMemoryTokenStore()
	cfg.RedirectURI, cfg.TokenStore = redirectURI, tokens
	h := transport.NewOAuthHandler(cfg)
	u, _ := url.Parse(serverURL)
	u.RawQuery, u.Fragment = "", ""
	h.SetBaseURL(u.String())
	meta, err := h.GetServerMetadata(ctx)
	if err != nil {
		return "", fmt.Errorf("read %s's sign-in server: %w", cn.Name, err)
	}
	// The token endpoint gets the app's own client id and secret, at the
	// sign-in and at every refresh.
	if err := s.checkSignIn(cn, clientRefs(cn), meta.TokenEndpoint); err != nil {
		return "", err
	}
	if h.GetClientID() == "" {
		if err := h.RegisterClient(ctx, s.cfg.ClientName); err != nil {
			return "", fmt.Errorf("register with %s's sign-in server: %w", cn.Name, err)
		}
	}
	verifier, err := transport.GenerateCodeVerifier()
	if err != nil {
		return "", err
	}
	state, err := transport.GenerateState()
	if err != nil {
		return "", err
	}
	authURL, err := h.GetAuthorizationURL(ctx, state, transport.GenerateCodeChallenge(verifier))
	if err != nil {
		return "", fmt.Errorf("start %s sign-in: %w", cn.Name, err)
	}
	// The person's browser takes the sign-in URL to the authorization
	// server: any variable's value it carries (the client id, the server
	// URL as its resource) must be allowed there.
	if err := s.checkSignIn(cn, s.carried(cn, authURL), authURL); err != nil {
		return "", err
	}
	s.authMu.Lock()
	now := s.now()
	for k, f := range s.pending {
		if now.After(f.expires) {
			delete(s.pending, k)
		}
	}
	s.pending[state] = &authFlow{connectorID: id, handler: h, tokens: tokens, verifier: verifier, redirectURI: redirectURI, expires: now.Add(authTimeout)}
	s.authMu.Unlock()
	return authURL, nil
}

// OwnsAuth reports whether state is a browser sign-in this service started
// and still waits for: the loopback callback, shared by every workspace,
// finds the one to hand it to.
func (s *Service) OwnsAuth(state string) bool {
	s.authMu.Lock()
	defer s.authMu.Unlock()
	f := s.pending[state]
	return f != nil && !s.now().After(f.expires)
}

// FinishAuth completes a browser sign-in from the redirect's state and
// code: it exchanges the code for a token, keeps token and client in the
// app's token variable, and tests the app. An empty code (the person
// declined) ends the flow with an error.
func (s *Service) FinishAuth(ctx context.Context, state, code string) (Connector, error) {
	s.authMu.Lock()
	f := s.pending[state]
	delete(s.pending, state)
	s.authMu.Unlock()
	if f == nil || s.now().After(f.expires) {
		return Connector{}, fault.NotFound("this sign-in link is unknown or expired; start the sign-in again from the Apps tab")
	}
	cn, err := s.Get(ctx, f.connectorID)
	if err != nil {
		return Connector{}, err
	}
	if code == "" {
		return Connector{}, fault.Invalid("the sign-in to %s was not completed", cn.Name)
	}
	if err := f.handler.ProcessAuthorizationResponse(ctx, code, state, f.verifier); err != nil {
		return Connector{}, fault.Invalid("%s refused the sign-in: %v", cn.Name, err)
	}
	tok, err := f.tokens.GetToken(ctx)
	if err != nil {
		return Connector{}, fmt.Errorf("read %s token: %w", cn.Name, err)
	}
	blob := tokenBlob{ClientID: f.handler.GetClientID(), ClientSecret: f.handler.GetClientSecret(),
		AuthMethod: f.handler.GetTokenEndpointAuthMethod(), RedirectURI: f.redirectURI, Token: *tok}
	if err := s.saveBlob(ctx, cn.tokenVariable(), blob); err != nil {
		return Connector{}, err
	}
	s.log.Info("app signed in", "connector", cn.ID, "app", cn.Name)
	if _, err := s.reset(ctx, cn); err != nil {
		return Connector{}, err
	}
	if c, err := s.Test(ctx, cn.ID); err == nil {
		return c, nil
	}
	return s.Get(ctx, cn.ID)
}

// oauthClient is the client part of an app's OAuth configuration: its own
// client credentials when the catalog names variables for them.
func (s *Service) oauthClient(cn Connector) (transport.OAuthConfig, error) {
	cfg := transport.OAuthConfig{PKCEEnabled: true, HTTPClient: s.cfg.HTTPClient}
	if cn.OAuth == nil {
		return cfg, nil
	}
	cfg.Scopes = cn.OAuth.Scopes
	for _, v := range []struct {
		name string
		dst  *string
	}{{cn.OAuth.ClientIDVar, &cfg.ClientID}, {cn.OAuth.ClientSecretVar, &cfg.ClientSecret}} {
		if v.name == "" {
			continue
		}
		val, ok := s.lookup(v.name)
		if !ok {
			return cfg, fault.Invalid("fill %s's setup form first (%s is not set)", cn.Name, v.name)
		}
		*v.dst = val
	}
	return cfg, nil
}

// oauthConfig is what a connection to a signed-in app uses: the stored
// client and a token store over its token variable (refreshed tokens are
// written back).
func (s *Service) oauthConfig(cn Connector) (transport.OAuthConfig, error) {
	cfg, err := s.oauthClient(cn)
	if err != nil {
		return cfg, err
	}
	blob, ok, err := s.loadBlob(cn.tokenVariable())
	if err != nil {
		return cfg, err
	}
	if ok {
		cfg.ClientID, cfg.ClientSecret, cfg.TokenEndpointAuthMethod, cfg.RedirectURI = blob.ClientID, blob.ClientSecret, blob.AuthMethod, blob.RedirectURI
	}
	cfg.TokenStore = &varTokenStore{s: s, name: cn.tokenVariable()}
	return cfg, nil
}

func (s *Service) loadBlob(name string) (tokenBlob, bool, error) {
	raw, ok := s.lookup(name)
	if !ok {
		return tokenBlob{}, false, nil
	}
	var b tokenBlob
	if err := json.Unmarshal([]byte(raw), &b); err != nil {
		return tokenBlob{}, false, fault.Invalid("variable %s does not hold a sign-in token; sign in again from the Apps tab", name)
	}
	return b, true, nil
}

func (s *Service) saveBlob(ctx context.Context, name string, b tokenBlob) error {
	if s.vars == nil {
		return fault.Invalid("this workspace has no variables store")
	}
	raw, err := json.Marshal(b)
	if err != nil {
		return err
	}
	if _, err := s.vars.Set(ctx, name, string(raw)); err != nil {
		return fmt.Errorf("store sign-in token: %w", err)
	}
	return nil
}

// varTokenStore is mcp-go's token store over a workspace variable.
type varTokenStore struct {
	s    *Service
	name string
}

func (v *varTokenStore) GetToken(ctx context.Context) (*transport.Token, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b, ok, err := v.s.loadBlob(v.name)
	if err != nil {
		return nil, err
	}
	if !ok || b.Token.AccessToken == "" {
		return nil, transport.ErrNoToken
	}
	return &b.Token, nil
}

func (v *varTokenStore) SaveToken(ctx context.Context, t *transport.Token) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if t == nil {
		return errors.New("no token to save")
	}
	b, _, err := v.s.loadBlob(v.name)
	if err != nil {
		return err
	}
	b.Token = *t
	return v.s.saveBlob(ctx, v.name, b)
}
