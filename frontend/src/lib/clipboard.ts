// Copying a secret or a snippet: the clipboard when the browser allows it, else
// the text is selected on the page for the person to copy with Ctrl+C.

export type CopyResult = 'copied' | 'selected';

/** Copies text; where the clipboard is not allowed, selects `el`'s text instead. */
export async function copyText(text: string, el?: HTMLElement | null): Promise<CopyResult> {
  try {
    if (!navigator.clipboard) throw new Error('no clipboard');
    await navigator.clipboard.writeText(text);
    return 'copied';
  } catch {
    if (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) {
      el.focus();
      el.select();
    } else if (el) {
      const range = document.createRange();
      range.selectNodeContents(el);
      const sel = window.getSelection();
      sel?.removeAllRanges();
      sel?.addRange(range);
    }
    return 'selected';
  }
}
