# Rerun Desktop. `make run` opens the app, `make test` runs every test.
# Both install what they need first (make setup).

GO        ?= go
BIN       := build/bin
TAGS      := desktop,production,webkit2_41
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT    ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
DATE      ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
# SIGNING_KEY: a release signing key file (go run ./build/feed keygen FILE):
# make dist then signs the release feed, and the builds trust its public key.
# UPDATE_KEY: that public key in base64 (go run ./build/feed pubkey FILE);
# unset and without SIGNING_KEY, the build trusts no feed.
UPDATE_KEY ?= $(if $(SIGNING_KEY),$(shell $(GO) run ./build/feed pubkey $(SIGNING_KEY)))
LDFLAGS   := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT) -X main.date=$(DATE) $(if $(UPDATE_KEY),-X main.updateKey=$(UPDATE_KEY))
GOSRC     := $(shell find . -name '*.go' -not -path './frontend/node_modules/*') go.mod go.sum
WEBSRC    := $(shell find frontend/src frontend/index.html frontend/vite.config.ts frontend/package.json -type f 2>/dev/null)
PORT      ?= 7777

.PHONY: FORCE run setup frontend build server dist dist-windows dist-macos claude-code codex test test-go test-web test-e2e test-desktop test-dist bench bench-peers check-catalog fuzz clean

## run: build everything and open the window (or `rerun serve` with no display)
run: setup build
	@if [ -n "$$DISPLAY$$WAYLAND_DISPLAY" ] || [ "$$(uname -s)" != Linux ]; then \
		$(BIN)/rerun --port $(PORT); \
	else \
		echo "No display: running rerun serve; open the URL below in a browser."; \
		$(BIN)/rerun serve --port $(PORT); \
	fi

## setup: install the packages building and testing need (skips what is present)
setup:
	@build/setup.sh

## frontend: build the UI into frontend/dist (embedded by the Go build)
frontend: frontend/dist/index.html
frontend/dist/index.html: $(WEBSRC) frontend/package-lock.json
	cd frontend && npm run build

# The version the binaries say (main.version): rewritten only when it
# changes, so a commit that touches no Go file still rebuilds them
# (test-dist checks that the packages' binaries say the checkout's version).
$(BIN)/version: FORCE
	@mkdir -p $(BIN); echo '$(VERSION)' | cmp -s - $@ || echo '$(VERSION)' >$@

## build: the desktop binary (window + serve), needs GTK/WebKit
build: $(BIN)/rerun
$(BIN)/rerun: frontend/dist/index.html $(GOSRC) $(BIN)/version
	CGO_ENABLED=1 $(GO) build -tags $(TAGS) -ldflags '$(LDFLAGS)' -o $@ .

## server: a static headless binary (serve only), no cgo, no GTK
server: $(BIN)/rerun-server
$(BIN)/rerun-server: frontend/dist/index.html $(GOSRC) $(BIN)/version
	CGO_ENABLED=0 $(GO) build -ldflags '$(LDFLAGS)' -o $@ .

## dist: Linux packages into build/dist/: a .deb (nfpm, a Go tool in build/tools/nfpm) and a .tar.gz with install.sh
dist: build
	build/dist.sh $(BIN)/rerun

## dist-windows: rerun.exe cross-built for Windows (no cgo) and its NSIS installer build/dist/rerun-setup-VERSION-amd64.exe
dist-windows: $(BIN)/windows/rerun.exe
	build/dist-windows.sh $<
$(BIN)/windows/rerun.exe: frontend/dist/index.html $(GOSRC) $(BIN)/version
	GOOS=windows GOARCH=amd64 CGO_ENABLED=0 $(GO) build -tags desktop,production -ldflags '$(LDFLAGS) -H windowsgui' -o $@ .

## dist-macos: the Rerun.app skeleton (Info.plist, icon, a headless darwin/arm64 binary) into build/dist/;
## the window needs cgo and a Mac: build/macos/build-on-mac.sh makes the universal .app and .dmg there
dist-macos: $(BIN)/darwin/rerun-serve-arm64
	build/dist-macos.sh $(VERSION) $<
$(BIN)/darwin/rerun-serve-arm64: frontend/dist/index.html $(GOSRC) $(BIN)/version
	GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 $(GO) build -ldflags '$(LDFLAGS)' -o $@ .

## test: vet, Go tests, frontend unit tests, end-to-end tests in Chromium, desktop smoke test, Linux packages
test: setup test-go test-web test-e2e test-desktop test-dist

# Tests keep the key that seals workspace variables in a file in their data
# folder, never in this computer's OS keychain.
# They never ask the internet for a newer release, nor the MCP registry.
test test-go test-e2e test-desktop test-dist bench fuzz: export RERUN_KEYCHAIN = off
test test-go test-e2e test-desktop test-dist bench fuzz: export RERUN_UPDATE_FEED = off
test test-go test-e2e test-desktop test-dist bench fuzz: export RERUN_MCP_REGISTRY = off

# The relay's store suite runs on PostgreSQL too: a throwaway cluster on
# 127.0.0.1 (build/postgres.sh; installs Debian's postgresql when missing)
# unless RERUN_TEST_POSTGRES already names one.
test-go: $(BIN)/mailpit claude-code codex
	$(GO) vet ./...
	@if [ -z "$$RERUN_TEST_POSTGRES" ]; then \
		RERUN_TEST_POSTGRES=$$(build/postgres.sh) || echo "PostgreSQL did not start: the relay's PostgreSQL tests are skipped"; \
	fi; export RERUN_TEST_POSTGRES; \
	export RERUN_MAILPIT=$(abspath $(BIN)/mailpit); \
	echo "$(GO) test -race -count=1 -timeout 30m ./..."; $(GO) test -race -count=1 -timeout 30m ./...
	@# the tray test skips under -race (fyne.io/systray races on its own menu version)
	$(GO) test -count=1 -run TestTrayOverDBus ./app

test-web:
	cd frontend && npm run check && npm test

test-e2e: server $(BIN)/fakellm $(BIN)/rerun-server-testkey
	cd frontend && RERUN_BIN=$(abspath $(BIN)/rerun-server) RERUN_FAKELLM=$(abspath $(BIN)/fakellm) \
		RERUN_BIN_TESTKEY=$(abspath $(BIN)/rerun-server-testkey) \
		node --test --test-concurrency=1 e2e/*.spec.mjs

# rerun-server-testkey: the server as version v1.4.2 trusting the test-only
# release key in frontend/e2e/testdata (never a real release's), so
# e2e/update.spec.mjs can sign a feed it trusts and see the update found.
E2E_UPDATE_KEY := frontend/e2e/testdata/update-test.key
$(BIN)/rerun-server-testkey: frontend/dist/index.html $(GOSRC) $(E2E_UPDATE_KEY)
	CGO_ENABLED=0 $(GO) build -ldflags "-s -w -X main.version=v1.4.2 -X main.commit=$(COMMIT) -X main.date=$(DATE) \
		-X main.updateKey=$$($(GO) run ./build/feed pubkey $(E2E_UPDATE_KEY))" -o $@ .

# fakellm: the fake model server (Anthropic and OpenAI wire formats) the
# end-to-end tests point `rerun serve` at; also handy for trying the UI.
$(BIN)/fakellm: $(GOSRC)
	CGO_ENABLED=0 $(GO) build -o $@ ./backend/llm/llmtest/cmd/fakellm

# claude-code: the real Claude Code CLI (npm), which TestClaudeCodeCLI drives
# against the MCP endpoint; without it (offline) that test is skipped.
CLAUDE_CODE_VERSION = 2.1.197
claude-code:
	@test -x build/claude-code/node_modules/.bin/claude || (mkdir -p build/claude-code && cd build/claude-code && \
		npm install --no-audit --no-fund @anthropic-ai/claude-code@$(CLAUDE_CODE_VERSION)) || \
		echo "Claude Code did not install: TestClaudeCodeCLI is skipped"

# codex: the real Codex CLI (npm), which TestCodexCLI drives through the
# fake model server's Responses API
CODEX_VERSION = 0.171.0
codex:
	@test -x build/codex/node_modules/.bin/codex || (mkdir -p build/codex && cd build/codex && \
		npm install --no-audit --no-fund @openai/codex@$(CODEX_VERSION)) || \
		echo "Codex did not install: TestCodexCLI is skipped"

# mailpit: the real SMTP server the email tests send to, built from its
# own module (internal/tools/mailpit) so its dependencies never move ours.
$(BIN)/mailpit: internal/tools/mailpit/go.mod internal/tools/mailpit/go.sum
	cd internal/tools/mailpit && GOWORK=off CGO_ENABLED=0 $(GO) build -o $(abspath $@) github.com/axllent/mailpit

# rerun-relay: the hosted relay (sync/cmd/rerun-relay), a static binary.
$(BIN)/rerun-relay: $(GOSRC)
	CGO_ENABLED=0 $(GO) build -o $@ ./sync/cmd/rerun-relay

test-desktop: build
	build/smoke-desktop.sh $(BIN)/rerun $(BIN)/desktop-smoke.png

# test-dist: build the packages, lintian the .deb, install it with apt-get
# (root or sudo) and smoke-test the installed binary; install the .tar.gz into
# a temporary prefix (build/test-dist.sh).
test-dist:
	build/test-dist.sh

## bench: cold start, idle memory, binary sizes, webhook intake, scheduler lateness, sandbox overhead, Desktop screen, agent browsers (see build/bench.sh)
bench: build server $(BIN)/fakellm
	$(GO) test -run '^$$' -bench . -benchmem ./backend/...
	build/bench.sh $(BIN)/rerun-server $(BIN)/rerun $(BIN)/fakellm

## bench-peers: Rerun beside n8n (installed from npm, pinned): fresh start, memory, webhook intake (see build/bench-peers.sh)
bench-peers: server $(BIN)/fakellm
	build/bench-peers.sh $(BIN)/rerun-server $(BIN)/fakellm

## check-catalog: ask npm and PyPI whether every built-in app's package is still published and not deprecated (needs the network)
check-catalog:
	RERUN_CHECK_CATALOG=1 $(GO) test -count=1 -run TestCatalogPackagesStillPublished -v ./backend/connector

## fuzz: run each fuzz test for a while (FUZZTIME=30s each)
FUZZ := FuzzAgentJSON:./backend/httpapi FuzzResolve:./backend/tool FuzzSQLGuard:./backend/tool FuzzParseStat:./backend/tool FuzzPricesJSON:./backend/llm FuzzRequest:./backend/mcpapi FuzzResolve:./backend/secret FuzzRedact:./backend/secret FuzzParseHosts:./backend/secret FuzzPause:./backend/pause FuzzSchedule:./backend/schedule FuzzVerifySignature:./backend/trigger FuzzParse:./backend/skill FuzzMatchQuery:./backend/memory FuzzReadPackage:./backend/template FuzzOpenRecord:./backend/replica FuzzPage:./backend/brain FuzzDecode:./backend/jsonarg FuzzDecode:./sync/protocol FuzzVerify:./sync/protocol FuzzCheckChange:./sync/protocol FuzzParsePairing:./sync/client FuzzFirecrawlScrape:./backend/tool FuzzSettings:./backend/outbox FuzzExecArg:./backend/autostart FuzzWindowsArg:./backend/autostart FuzzParse:./backend/prefs FuzzCheckSubscription:./sync/protocol FuzzParsePhoneSecret:./sync/protocol FuzzOpenPhone:./sync/protocol FuzzPhoneAnswer:./backend/relaylink FuzzCommandDestinations:./backend/tool FuzzParse:./backend/update FuzzParseResult:./backend/update FuzzRead:./backend/backup FuzzCheckName:./backend/backup FuzzRead:./backend/agentfile FuzzParse:./backend/search FuzzReadRegistry:./backend/connector FuzzChatStream:./backend/llm
fuzz:
	@for f in $(FUZZ); do \
		echo "== $${f%%:*}"; \
		$(GO) test -run '^$$' -fuzz "^$${f%%:*}$$" -fuzztime $${FUZZTIME:-30s} $${f##*:} || exit 1; \
	done

clean:
	rm -rf $(BIN) build/dist frontend/dist/assets frontend/dist/index.html
