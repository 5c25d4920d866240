// Renders a soul (markdown) to HTML that is safe to put in the page: raw HTML
// in the source is shown as text, and links or images only keep http(s),
// mailto and relative targets.
import { Marked, type Tokens } from 'marked';

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

const marked = new Marked({
  gfm: true,
  breaks: false,
  async: false,
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
