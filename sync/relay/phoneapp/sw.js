// The phone app's service worker: it opens each pushed card with the phone
// key (the relay sent ciphertext only), keeps it for "To handle" and shows
// a notification; a tap opens the card.
/* global self, clients, importScripts, rerunPhone */
importScripts("common.js");

self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (e) => e.waitUntil(clients.claim()));

// receive takes one pushed message: it opens the card, keeps it, tells the
// open pages and shows the notification.
async function receive(bytes) {
  const cfg = await rerunPhone.getConfig();
  if (!cfg) return;
  let card;
  try {
    card = await rerunPhone.openSealed(cfg.key, "card", bytes);
  } catch {
    return self.registration.showNotification("Rerun", { body: "A notification arrived that this phone cannot open: pair it again." });
  }
  const old = await rerunPhone.getCard(card.id);
  await rerunPhone.putCard({ ...card, state: old ? old.state : "open", received_at: Date.now() });
  const open = await clients.matchAll({ type: "window" });
  for (const c of open) c.postMessage({ type: "card", id: card.id });
  await self.registration.showNotification(card.agent + ": " + card.title, {
    body: card.body || (card.questions && card.questions.length ? card.questions[0].question : ""),
    tag: card.id, data: { id: card.id }, icon: "icon-192.png", badge: "icon-192.png",
  });
}

self.addEventListener("push", (event) => {
  if (event.data) event.waitUntil(event.data.arrayBuffer().then(receive));
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const url = "./#card=" + encodeURIComponent(event.notification.data && event.notification.data.id || "");
  event.waitUntil((async () => {
    const open = await clients.matchAll({ type: "window" });
    if (open.length) {
      await open[0].focus();
      return open[0].navigate(url);
    }
    return clients.openWindow(url);
  })());
});
