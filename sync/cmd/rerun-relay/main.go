// Command rerun-relay is the hosted relay of Rerun Desktop: it takes public
// webhooks for linked workspaces and delivers them to each workspace's
// desktop when it is online (package relay). Flags and wiring only.
//
//	rerun-relay -listen :8443 -public-url https://relay.example.com -tls-cert cert.pem -tls-key key.pem
//	rerun-relay -listen 127.0.0.1:8080 -public-url https://relay.example.com   # behind a TLS proxy
//	rerun-relay -db relay.db -new-workspace                                     # link a workspace, print its id and secret
//
// Each flag can also be set by the environment variable named in its help.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/rerun-build/rerun-desktop/sync/relay"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "rerun-relay:", err)
		os.Exit(1)
	}
}

// env returns the environment variable name, or def when it is unset: the
// one place the relay reads its environment.
func env(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

func run() error {
	listen := flag.String("listen", env("RERUN_RELAY_LISTEN", ":8080"), "`address` to listen on ($RERUN_RELAY_LISTEN)")
	public := flag.String("public-url", env("RERUN_RELAY_PUBLIC_URL", ""),
		"`URL` webhook senders reach this relay at; trigger URLs are URL/h/<token> ($RERUN_RELAY_PUBLIC_URL; default http://<listen address>)")
	dbPath := flag.String("db", env("RERUN_RELAY_DB", "rerun-relay.db"), "SQLite `file` of the store, when -postgres is not set ($RERUN_RELAY_DB)")
	pgURL := flag.String("postgres", env("RERUN_RELAY_POSTGRES", ""),
		"PostgreSQL `URL` of the store, shared by several relay processes ($RERUN_RELAY_POSTGRES)")
	cert := flag.String("tls-cert", env("RERUN_RELAY_TLS_CERT", ""), "TLS certificate `file` (PEM); without it, serve plain HTTP behind a TLS proxy ($RERUN_RELAY_TLS_CERT)")
	key := flag.String("tls-key", env("RERUN_RELAY_TLS_KEY", ""), "TLS key `file` (PEM) ($RERUN_RELAY_TLS_KEY)")
	signup := flag.String("signup-token", env("RERUN_RELAY_SIGNUP_TOKEN", ""),
		"`token` that lets POST /v1/workspaces link a workspace; empty: only -new-workspace links ($RERUN_RELAY_SIGNUP_TOKEN)")
	retention := flag.Duration("retention", 7*24*time.Hour, "how long an unacked delivery is retried before it is a dead letter")
	newWorkspace := flag.Bool("new-workspace", false, "link a new workspace, print its id and secret, and exit")
	pushHosts := flag.String("push-hosts", env("RERUN_RELAY_PUSH_HOSTS", strings.Join(relay.DefaultPushHosts, ",")),
		"comma-separated `hosts` phones' push subscriptions may name (.example.com: any host under it); the relay sends Web Push nowhere else ($RERUN_RELAY_PUSH_HOSTS)")
	verbose := flag.Bool("v", false, "log each webhook and delivery")
	flag.Parse()
	if (*cert == "") != (*key == "") {
		return errors.New("-tls-cert and -tls-key go together")
	}

	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var store relay.Store
	var err error
	if *pgURL != "" {
		store, err = relay.OpenPostgres(ctx, *pgURL)
	} else {
		store, err = relay.OpenSQLite(ctx, *dbPath)
	}
	if err != nil {
		return err
	}
	defer store.Close()

	cfg := relay.Config{PublicURL: *public, SignupToken: *signup, Retention: *retention, Logger: log, PushHosts: []string{}}
	for _, h := range strings.Split(*pushHosts, ",") {
		if h = strings.TrimSpace(h); h != "" {
			cfg.PushHosts = append(cfg.PushHosts, h)
		}
	}
	if *newWorkspace {
		l, err := relay.New(store, cfg).CreateWorkspace(ctx)
		if err != nil {
			return err
		}
		fmt.Printf("workspace %s\nsecret %s\n", l.WorkspaceID, l.Secret)
		return nil
	}

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	scheme := "http"
	if *cert != "" {
		scheme = "https"
	}
	if cfg.PublicURL == "" {
		cfg.PublicURL = scheme + "://" + reachable(ln.Addr())
	}
	srv := relay.New(store, cfg)
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 64 << 10}
	served := make(chan error, 1)
	go func() {
		if *cert != "" {
			served <- hs.ServeTLS(ln, *cert, *key)
		} else {
			served <- hs.Serve(ln)
		}
	}()
	go srv.Serve(ctx)
	// Tests and scripts read the address from this line.
	fmt.Printf("rerun-relay listening on %s://%s (public %s)\n", scheme, reachable(ln.Addr()), cfg.PublicURL)
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	log.Info("stopping")
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return hs.Shutdown(sctx)
}

// reachable is addr with an unspecified IP (listening on all interfaces)
// replaced by localhost.
func reachable(addr net.Addr) string {
	if a, ok := addr.(*net.TCPAddr); ok && a.IP.IsUnspecified() {
		return net.JoinHostPort("localhost", fmt.Sprint(a.Port))
	}
	return addr.String()
}
