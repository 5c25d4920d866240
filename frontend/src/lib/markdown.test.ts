import { describe, expect, it } from 'vitest';
import { escapeHtml, isSafeUrl, renderMarkdown } from './markdown';

describe('renderMarkdown', () => {
  it('renders ordinary markdown', () => {
    const html = renderMarkdown('# Role\n\nYou are **kind**.\n\n- one\n- two');
    expect(html).toContain('<h1>Role</h1>');
    expect(html).toContain('<strong>kind</strong>');
    expect(html).toContain('<li>one</li>');
  });

  const attacks: [string, string, string][] = [
    ['a script block', '<script>alert(1)</script>', '<script'],
    ['an inline tag with a handler', 'hi <img src=x onerror="alert(1)"> there', '<img'],
    ['an html block', '<div onclick="x()">click</div>', '<div'],
    ['an iframe', '<iframe src="https://evil.example"></iframe>', '<iframe'],
    ['a javascript link', '[click](javascript:alert(1))', 'javascript:'],
    ['a javascript link hidden by a tab', '[click](java\tscript:alert(1))', 'href'],
    ['a data link', '[click](data:text/html;base64,PHNjcmlwdD4=)', 'data:'],
    ['an autolink to javascript', '<javascript:alert(1)>', 'href="javascript'],
    ['a remote image', '![pixel](https://tracker.example/p.png)', '<img'],
  ];
  for (const [name, src, forbidden] of attacks) {
    it(`neutralises ${name}`, () => {
      const html = renderMarkdown(src);
      expect(html.toLowerCase()).not.toContain(forbidden.toLowerCase());
    });
  }

  it('shows raw HTML as text', () => {
    expect(renderMarkdown('<b>bold</b>')).toContain('&lt;b&gt;bold&lt;/b&gt;');
  });

  it('keeps safe links and opens them outside', () => {
    const html = renderMarkdown('[docs](https://example.com/a?b=1&c=2 "Docs")');
    expect(html).toContain('href="https://example.com/a?b=1&amp;c=2"');
    expect(html).toContain('title="Docs"');
    expect(html).toContain('rel="noopener noreferrer"');
  });

  it('escapes code', () => {
    expect(renderMarkdown('`<script>`')).toContain('<code>&lt;script&gt;</code>');
  });
});

describe('isSafeUrl', () => {
  it.each([
    ['https://a.example', true],
    ['http://a.example', true],
    ['mailto:a@b.example', true],
    ['#section', true],
    ['/relative/path', true],
    ['JavaScript:alert(1)', false],
    [' javascript:alert(1)', false],
    ['vbscript:x', false],
    ['data:text/html,x', false],
    ['file:///etc/passwd', false],
  ])('%s → %s', (url, want) => {
    expect(isSafeUrl(url)).toBe(want);
  });
});

describe('escapeHtml', () => {
  it('escapes the five special characters', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe('&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
  });
});
