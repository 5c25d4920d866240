// Shared by the page and the service worker: the phone's store (IndexedDB)
// and the phone key's seal (AES-256-GCM, as sync/protocol SealPhone).
/* global self */
(function (g) {
  "use strict";
  const DB = "rerun-phone";

  function open() {
    return new Promise((resolve, reject) => {
      const req = indexedDB.open(DB, 1);
      req.onupgradeneeded = () => {
        req.result.createObjectStore("kv");
        req.result.createObjectStore("cards", { keyPath: "id" });
      };
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
    });
  }

  async function tx(store, mode, fn) {
    const db = await open();
    return new Promise((resolve, reject) => {
      const t = db.transaction(store, mode);
      const out = fn(t.objectStore(store));
      t.oncomplete = () => resolve(out && "result" in out ? out.result : undefined);
      t.onerror = () => reject(t.error);
    });
  }

  const b64u = {
    decode(s) {
      s = s.replace(/-/g, "+").replace(/_/g, "/");
      while (s.length % 4) s += "=";
      return Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
    },
    encode(bytes) {
      let s = "";
      for (const b of new Uint8Array(bytes)) s += String.fromCharCode(b);
      return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    },
  };

  async function aesKey(raw) {
    return crypto.subtle.importKey("raw", b64u.decode(raw), "AES-GCM", false, ["encrypt", "decrypt"]);
  }

  // seal and openSealed speak sync/protocol's sealed phone records:
  // version 1, a 12-byte nonce, AES-256-GCM, additional data
  // "rerun phone v1 <kind>".
  async function seal(rawKey, kind, obj) {
    const nonce = crypto.getRandomValues(new Uint8Array(12));
    const ct = await crypto.subtle.encrypt(
      { name: "AES-GCM", iv: nonce, additionalData: new TextEncoder().encode("rerun phone v1 " + kind) },
      await aesKey(rawKey), new TextEncoder().encode(JSON.stringify(obj)));
    const out = new Uint8Array(13 + ct.byteLength);
    out[0] = 1;
    out.set(nonce, 1);
    out.set(new Uint8Array(ct), 13);
    return out;
  }

  async function openSealed(rawKey, kind, bytes) {
    bytes = new Uint8Array(bytes);
    if (bytes.length < 29 || bytes[0] !== 1) throw new Error("not a sealed phone record");
    const plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: bytes.slice(1, 13), additionalData: new TextEncoder().encode("rerun phone v1 " + kind) },
      await aesKey(rawKey), bytes.slice(13));
    return JSON.parse(new TextDecoder().decode(plain));
  }

  g.rerunPhone = {
    b64u, seal, openSealed,
    getConfig: () => tx("kv", "readonly", (s) => s.get("config")),
    setConfig: (c) => tx("kv", "readwrite", (s) => s.put(c, "config")),
    clear: () => Promise.all([tx("kv", "readwrite", (s) => s.clear()), tx("cards", "readwrite", (s) => s.clear())]),
    cards: () => tx("cards", "readonly", (s) => s.getAll()),
    putCard: (c) => tx("cards", "readwrite", (s) => s.put(c)),
    getCard: (id) => tx("cards", "readonly", (s) => s.get(id)),
  };
})(typeof self !== "undefined" ? self : window);
