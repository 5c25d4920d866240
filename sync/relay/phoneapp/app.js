// The phone app: pairing (the link's fragment never reaches the relay),
// "To handle" (cards the pushes brought) and answering a card, sealed with
// the phone key before it leaves the phone.
/* global rerunPhone */
(function () {
  "use strict";
  const main = document.getElementById("main");
  const P = rerunPhone;

  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? "" : v);
    }
    for (const k of kids.flat()) if (k !== null && k !== undefined) e.append(k);
    return e;
  }

  // show replaces the page with nodes: lists are spread and null left out,
  // as el does with its children.
  function show(...nodes) {
    main.replaceChildren(...nodes.flat().filter((n) => n !== null && n !== undefined));
  }

  async function api(path, opts) {
    const res = await fetch(path, opts);
    let body = null;
    try { body = await res.json(); } catch { /* 204 */ }
    if (!res.ok) throw new Error((body && body.error) || res.status + " " + res.statusText);
    return body;
  }

  function readPairing(hash) {
    const m = /^#pair=([A-Za-z0-9_-]+)$/.exec(hash);
    if (!m) return null;
    try {
      const p = JSON.parse(new TextDecoder().decode(P.b64u.decode(m[1])));
      if (p.v !== 1 || !p.w || !p.t || !p.k) return null;
      return p;
    } catch { return null; }
  }

  async function pair(p, name, status) {
    status.textContent = "Pairing…";
    try {
      if (!("serviceWorker" in navigator) || !("PushManager" in window)) {
        throw new Error("this browser cannot take push notifications; on an iPhone, add this page to the Home Screen first, then open it from there");
      }
      const reg = await navigator.serviceWorker.register("sw.js", { scope: "./" });
      await navigator.serviceWorker.ready;
      if ((await Notification.requestPermission()) !== "granted") {
        throw new Error("notifications are off for this page: allow them, then try again");
      }
      const { public_key } = await api("/v1/phone/vapid");
      let sub = await reg.pushManager.getSubscription();
      if (sub) await sub.unsubscribe();
      sub = await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: P.b64u.decode(public_key) });
      const paired = await api("/v1/phone/pair", {
        method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ workspace_id: p.w, token: p.t, name, subscription: sub.toJSON() }),
      });
      await P.setConfig({ workspace_id: p.w, workspace_name: p.n || "", phone_id: paired.phone_id, secret: paired.secret, key: p.k });
      history.replaceState(null, "", location.pathname);
      await render();
    } catch (e) {
      status.textContent = "Not paired: " + e.message;
      status.className = "error";
    }
  }

  function pairingView(p) {
    const name = el("input", { type: "text", value: guessName(), "aria-label": "This phone's name" });
    const status = el("p", { class: "muted", role: "status" });
    show(el("div", { class: "card" },
      el("h2", {}, "Pair with " + (p.n || "your workspace")),
      el("p", { class: "muted" }, "This phone will get your coworkers' cards as notifications and can answer them."),
      el("label", {}, "Name of this phone", name),
      el("div", { class: "row" }, el("button", { class: "primary", onclick: () => pair(p, name.value, status) }, "Pair this phone")),
      status));
  }

  function guessName() {
    const ua = navigator.userAgent;
    if (/iPhone/.test(ua)) return "iPhone";
    if (/Android/.test(ua)) return "Android phone";
    return "Phone";
  }

  async function answer(cfg, card, body, status) {
    status.textContent = "Sending…";
    try {
      const sealed = await P.seal(cfg.key, "answer", {
        v: 1, notification_id: card.id, pause_id: card.pause_id, phone_id: cfg.phone_id,
        answer: body, at: new Date().toISOString(),
      });
      await api("/v1/phone/answers", {
        method: "POST", headers: { "Content-Type": "application/json", Authorization: "Bearer " + cfg.secret },
        body: JSON.stringify({ body: btoa(String.fromCharCode(...sealed)) }),
      });
      await P.putCard({ ...card, state: "sent" });
      await render();
    } catch (e) {
      status.textContent = "Not sent: " + e.message;
      status.className = "error";
    }
  }

  function cardView(cfg, card) {
    const status = el("p", { class: "muted", role: "status" });
    const parts = [el("h2", {}, card.title), el("p", { class: "muted" }, card.agent)];
    if (card.body) parts.push(el("p", {}, card.body));
    if (card.state === "sent") {
      parts.push(el("p", {}, "Answer sent: your computer applies it when it is awake."));
      return el("article", { class: "card", "data-card": card.id }, parts);
    }
    if (card.kind === "question" && card.questions) {
      const inputs = card.questions.map((q, i) => {
        const input = el("input", { type: "text", "aria-label": "Answer " + (i + 1) });
        const opts = (q.options || []).map((o) => el("button", { type: "button", onclick: () => { input.value = o; } }, o));
        parts.push(el("div", {}, el("p", {}, q.question), el("div", { class: "row" }, opts), input));
        return input;
      });
      parts.push(el("div", { class: "row" }, el("button", {
        class: "primary", onclick: () => answer(cfg, card, { answers: inputs.map((x) => x.value) }, status),
      }, "Send answers")));
    } else if (card.kind === "approval" && card.items) {
      const decisions = card.items.map((it) => ({ id: it.id, approved: null }));
      card.items.forEach((it, i) => {
        const yes = el("button", { type: "button", "aria-pressed": "false" }, "Approve");
        const no = el("button", { type: "button", class: "decline", "aria-pressed": "false" }, "Decline");
        const set = (v) => {
          decisions[i].approved = v;
          yes.setAttribute("aria-pressed", String(v));
          no.setAttribute("aria-pressed", String(!v));
          if (decisions.every((d) => d.approved !== null)) status.textContent = "";
        };
        yes.addEventListener("click", () => set(true));
        no.addEventListener("click", () => set(false));
        parts.push(el("div", { "data-item": it.id }, el("p", {}, it.title), it.detail ? el("pre", {}, it.detail) : null, el("div", { class: "row" }, yes, no)));
      });
      parts.push(el("div", { class: "row" }, el("button", {
        class: "primary", onclick: () => {
          if (decisions.some((d) => d.approved === null)) { status.textContent = "Approve or decline each item first."; return; }
          answer(cfg, card, { decisions: decisions.map((d) => ({ id: d.id, approved: d.approved, note: "" })) }, status);
        },
      }, "Send decisions")));
    } else if (card.kind === "connector" && card.connector) {
      connectorView(cfg, card, parts, status);
    } else if (card.kind === "budget" && card.budget) {
      budgetView(cfg, card, parts, status);
    } else if (card.kind === "credential" && card.credential) {
      credentialView(cfg, card, parts, status);
    } else {
      parts.push(el("p", { class: "muted" }, "Answer this one on your computer."));
    }
    parts.push(status);
    return el("article", { class: "card", "data-card": card.id }, parts);
  }

  let uid = 0;
  // field is a labelled input; a secret is a password input, never stored:
  // its value leaves the phone only inside the sealed answer.
  function field(label, input, help) {
    const id = "f" + (++uid);
    input.id = id;
    return el("div", { class: "field" }, el("label", { for: id }, label), input, help ? el("p", { class: "muted" }, help) : null);
  }

  function secretInput(testid) {
    return el("input", { type: "password", autocomplete: "off", autocapitalize: "off", spellcheck: "false", "data-testid": testid });
  }

  function decline(cfg, card, status, text) {
    return el("button", { type: "button", onclick: () => answer(cfg, card, { dismiss: true, note: "Declined on the phone" }, status) }, text);
  }

  // A connector card: the integration's setup form; Connect sends its
  // values, Decline closes the card without them.
  function connectorView(cfg, card, parts, status) {
    const c = card.connector;
    parts.push(el("p", {}, "Connect ", el("strong", {}, c.connector)));
    if (c.description) parts.push(el("p", { class: "muted" }, c.description));
    const inputs = (c.fields || []).map((f) => {
      let input;
      if (f.type === "secret") input = secretInput("connector-" + f.name);
      else if (f.type === "select" && f.options && f.options.length) {
        input = el("select", {}, el("option", { value: "" }, f.placeholder || "Choose…"), f.options.map((o) => el("option", { value: o }, o)));
      } else input = el("input", { type: f.type === "url" ? "url" : "text", placeholder: f.placeholder || null, autocomplete: "off" });
      if (f.required) input.required = true;
      parts.push(field((f.label || f.name) + (f.required ? " *" : ""), input, f.help));
      return { f, input };
    });
    parts.push(el("div", { class: "row" }, el("button", {
      class: "primary", onclick: () => {
        const values = {};
        for (const { f, input } of inputs) {
          const v = f.type === "secret" ? input.value : input.value.trim();
          if (!v.trim() && f.required) { status.textContent = (f.label || f.name) + " is required."; status.className = "error"; input.focus(); return; }
          if (v.trim()) values[f.name] = v;
        }
        answer(cfg, card, { values }, status);
      },
    }, "Connect"), decline(cfg, card, status, "Decline")));
    if (inputs.some(({ f }) => f.type === "secret")) {
      parts.push(el("p", { class: "muted" }, "Masked fields are sealed on this phone and go straight into your workspace variables."));
    }
  }

  function amount(b, v) {
    return b.unit === "usd" ? "$" + Number(v).toFixed(2) : Math.round(v).toLocaleString("en-US") + " tokens";
  }

  // A budget card: what was spent against the limit, and the app's three
  // ways on: allow more for this run, raise the limit, or stop.
  function budgetView(cfg, card, parts, status) {
    const b = card.budget;
    const unit = b.unit === "usd" ? "US dollars" : "tokens";
    parts.push(el("p", { "data-testid": "budget-line" }, b.line));
    const more = el("input", { type: "text", inputmode: "decimal", value: String(b.suggest_more) });
    const limit = el("input", { type: "text", inputmode: "decimal", value: String(b.suggest_limit) });
    parts.push(field("Allow how much more for this run, in " + unit, more));
    parts.push(field("Or raise the limit to, in " + unit, limit));
    const send = (choice, input) => {
      const v = Number(input.value.replace(/[$,\s_]/g, ""));
      if (!Number.isFinite(v) || v <= 0) { status.textContent = "Enter an amount above 0."; status.className = "error"; input.focus(); return; }
      if (choice === "raise" && v <= b.spent) { status.textContent = "Raise it above what was spent (" + amount(b, b.spent) + ")."; status.className = "error"; input.focus(); return; }
      answer(cfg, card, { choice, amount: b.unit === "tokens" ? Math.floor(v) : v }, status);
    };
    parts.push(el("div", { class: "row" },
      el("button", { class: "primary", type: "button", onclick: () => send("allow", more) }, "Allow more"),
      el("button", { type: "button", onclick: () => send("raise", limit) }, "Raise the limit"),
      el("button", { type: "button", onclick: () => answer(cfg, card, { choice: "stop", amount: 0 }, status) }, "Stop the run")));
  }

  // A credential card: one masked field for a named variable. The value is
  // sealed into the answer and cleared here once sent.
  function credentialView(cfg, card, parts, status) {
    const c = card.credential;
    if (c.description) parts.push(el("p", { class: "muted" }, c.description));
    if (/^https?:\/\//i.test(c.url || "")) parts.push(el("p", {}, el("a", { href: c.url, target: "_blank", rel: "noopener noreferrer" }, "Where to get it ↗")));
    const input = secretInput("credential-value");
    parts.push(field((c.label || c.variable) + " (${" + c.variable + "})", input,
      c.hosts && c.hosts.length ? "It may be sent only to " + c.hosts.join(", ") + "." : "It may be sent to any host."));
    parts.push(el("div", { class: "row" }, el("button", {
      class: "primary", onclick: () => {
        const value = input.value;
        if (!value.trim()) { status.textContent = "Enter the value first."; status.className = "error"; input.focus(); return; }
        answer(cfg, card, { value }, status);
      },
    }, "Save to variables"), decline(cfg, card, status, "Decline")));
    parts.push(el("p", { class: "muted" }, "The value is sealed on this phone for your computer, which stores it as ${" + c.variable + "}; the relay sees only ciphertext."));
  }

  async function render() {
    const p = readPairing(location.hash);
    if (p) return pairingView(p);
    const cfg = await P.getConfig();
    if (!cfg) {
      return show(el("p", {}, "This phone is not paired. On your computer open Settings → Phone and scan the code."));
    }
    document.getElementById("title").textContent = cfg.workspace_name || "Rerun";
    const cards = (await P.cards()).sort((a, b) => (b.received_at || 0) - (a.received_at || 0));
    const m = /^#card=(.+)$/.exec(location.hash);
    const only = m ? decodeURIComponent(m[1]) : "";
    const list = cards.filter((c) => !only || c.id === only);
    const open = list.filter((c) => c.state !== "sent");
    show(el("h2", {}, "To handle"),
      open.length || only ? null : el("p", { class: "muted" }, "Nothing waits for you."),
      list.map((c) => cardView(cfg, c)),
      only ? el("p", {}, el("a", { href: "#" }, "Everything to handle")) : null);
  }

  window.addEventListener("hashchange", render);
  if (navigator.serviceWorker) {
    navigator.serviceWorker.addEventListener("message", () => render());
    navigator.serviceWorker.register("sw.js", { scope: "./" }).catch(() => {});
  }
  render();
})();
