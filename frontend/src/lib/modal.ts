// What makes a modal of the app (dialogs, the enlarged Desktop screen) one:
// focus moves in when it opens, Tab stays inside, Escape closes the topmost
// one, and focus goes back to what had it once it closes.

/** Modals open now, innermost last. */
const open: object[] = [];

const FOCUSABLE =
  'button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"]), a[href]';

/** The controls inside root that Tab reaches, in order. */
export const focusables = (root: HTMLElement) => Array.from(root.querySelectorAll<HTMLElement>(FOCUSABLE));

/**
 * Makes root a modal: focus goes to its [data-autofocus] element (else its
 * first control, else root), Tab and Shift+Tab cycle inside it, and Escape
 * calls onClose while it is the topmost modal, also when focus fell out of it
 * (a button disabled while busy drops focus to the body); a handler inside
 * that takes Escape for itself calls preventDefault or stopPropagation.
 * Returns the release, which gives focus back to what had it before.
 */
export function openModal(root: HTMLElement, onClose: () => void): () => void {
  const me = {};
  open.push(me);
  const previous = document.activeElement as HTMLElement | null;
  const first = root.querySelector<HTMLElement>('[data-autofocus]') ?? focusables(root)[0] ?? root;
  first.focus();
  if (first instanceof HTMLInputElement) first.select();

  const onWindowKey = (e: KeyboardEvent) => {
    if (e.key === 'Escape' && open[open.length - 1] === me && !e.defaultPrevented) {
      e.preventDefault();
      onClose();
    }
  };
  const onKey = (e: KeyboardEvent) => {
    if (e.key !== 'Tab') return;
    const els = focusables(root);
    if (els.length === 0) return;
    const head = els[0]!;
    const tail = els[els.length - 1]!;
    if (e.shiftKey && document.activeElement === head) {
      e.preventDefault();
      tail.focus();
    } else if (!e.shiftKey && document.activeElement === tail) {
      e.preventDefault();
      head.focus();
    }
  };
  window.addEventListener('keydown', onWindowKey);
  root.addEventListener('keydown', onKey);
  return () => {
    window.removeEventListener('keydown', onWindowKey);
    root.removeEventListener('keydown', onKey);
    open.splice(open.indexOf(me), 1);
    previous?.focus?.();
  };
}
