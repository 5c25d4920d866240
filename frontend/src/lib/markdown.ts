// Renders a soul (markdown) to HTML that is safe to put in the page: raw HTML
// in the source is shown as text, and links or images only keep http(s),
// mailto and relative targets.
import { Marked, Tokenizer, type Tokens } from 'marked';

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** True for URLs a rendered soul may link to. */
export function isSafeUrl(href: string): boolean {
  // Browsers ignore control characters and whitespace inside a scheme ("java\tscript:").
  const compact = href.replace(/[\u0000-\u0020\u007f-\u009f]/g, '').toLowerCase();
  const scheme = /^([a-z][a-z0-9+.-]*):/.exec(compact);
  if (!scheme) return true; // relative, fragment or query
  return scheme[1] === 'http' || scheme[1] === 'https' || scheme[1] === 'mailto';
}

/**
 * Where a bare URL found in text really ends. GFM runs a URL to the next space,
 * so in `{"url":"https://a.com/x","ok":true}` the whole JSON tail became one
 * link; quotes, braces, angle brackets, backticks, pipes and backslashes never
 * end a URL a person means, and an unbalanced closing bracket belongs to the
 * text around it. Returns the URL's length within text.
 */
export function autolinkEnd(text: string): number {
  let end = text.search(/["'<>{}|\\^`]/);
  if (end < 0) end = text.length;
  let url = text.slice(0, end);
  for (;;) {
    const before = url;
    url = url.replace(/[.,;:!?*_~]+$/, '');
    if (url.endsWith(']') && count(url, '[') < count(url, ']')) url = url.slice(0, -1);
    if (url.endsWith(')') && count(url, '(') < count(url, ')')) url = url.slice(0, -1);
    if (url === before) return url.length;
  }
}

function count(s: string, c: string): number {
  return s.split(c).length - 1;
}

const marked = new Marked({
  gfm: true,
  breaks: false,
  async: false,
  tokenizer: {
    url(src: string) {
      const t = Tokenizer.prototype.url.call(this, src);
      if (!t || t.href.startsWith('mailto:')) return t;
      const n = autolinkEnd(t.raw);
      if (n === t.raw.length) return t;
      if (n === 0 || /^(https?:\/\/|www\.)$/i.test(t.raw.slice(0, n))) return undefined; // nothing left worth a link: plain text
      const raw = t.raw.slice(0, n);
      const href = /^www\./i.test(raw) ? `http://${raw}` : raw;
      return { ...t, raw, text: raw, href, tokens: [{ type: 'text', raw, text: raw }] };
    },
  },
  renderer: {
    html({ text }: Tokens.HTML | Tokens.Tag): string {
      return escapeHtml(text);
    },
    link(token: Tokens.Link): string {
      const inner = this.parser.parseInline(token.tokens);
      if (!isSafeUrl(token.href)) return inner;
      const title = token.title ? ` title="${escapeHtml(token.title)}"` : '';
      return `<a href="${escapeHtml(token.href)}"${title} target="_blank" rel="noopener noreferrer">${inner}</a>`;
    },
    image(token: Tokens.Image): string {
      // Souls are local text: no remote images (they would leak that the soul was viewed).
      return escapeHtml(token.text);
    },
  },
});

export function renderMarkdown(src: string): string {
  return marked.parse(src, { async: false });
}
