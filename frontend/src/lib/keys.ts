// Keyboard helpers shared by the app's global shortcuts.

/** Whether a key press goes to something that takes text (shortcuts stay out of its way). */
export function inTextField(t: EventTarget | null): boolean {
  const el = t as HTMLElement | null;
  if (!el || typeof el.closest !== 'function') return false;
  return !!el.closest('input, textarea, select, [contenteditable=""], [contenteditable="true"]');
}

/** "Ctrl+K", or "⌘K" on a Mac. */
export function modKey(key: string, mac = typeof navigator !== 'undefined' && /Mac|iPhone|iPad/.test(navigator.platform)): string {
  return mac ? `⌘${key}` : `Ctrl+${key}`;
}
