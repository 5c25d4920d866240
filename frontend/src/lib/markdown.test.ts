import { describe, expect, it } from 'vitest';
import { autolinkEnd, escapeHtml, isSafeUrl, renderMarkdown } from './markdown';

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

describe('bare URLs in text', () => {
  it('end at the quote of a JSON string, not at the next space', () => {
    const html = renderMarkdown('Result: {"url":"https://example.com/a?b=1","ok":true} done');
    expect(html).toContain('<a href="https://example.com/a?b=1" target="_blank" rel="noopener noreferrer">https://example.com/a?b=1</a>');
    expect(html).toContain('&quot;,&quot;ok&quot;:true} done');
  });

  it('leave a closing bracket or quote to the text around them', () => {
    const html = renderMarkdown("['https://a.com/x', 'https://b.com/y']");
    expect(html).toContain('<a href="https://a.com/x"');
    expect(html).toContain('<a href="https://b.com/y" target="_blank" rel="noopener noreferrer">https://b.com/y</a>&#39;]');
    expect(renderMarkdown('(see https://example.com/wiki/Foo_(bar))')).toContain('href="https://example.com/wiki/Foo_(bar)"');
  });

  it('keep what already worked: plain URLs, www, mail addresses', () => {
    expect(renderMarkdown('go to https://example.com/path.')).toContain('<a href="https://example.com/path"');
    expect(renderMarkdown('www.example.com/x')).toContain('href="http://www.example.com/x"');
    expect(renderMarkdown('mail ada@example.com')).toContain('href="mailto:ada@example.com"');
  });
});

describe('autolinkEnd', () => {
  it('cuts at characters no URL a person means holds', () => {
    expect(autolinkEnd('https://a.com/x","b":2}')).toBe('https://a.com/x'.length);
    expect(autolinkEnd('https://a.com/x`')).toBe('https://a.com/x'.length);
    expect(autolinkEnd('https://a.com/x]')).toBe('https://a.com/x'.length);
    expect(autolinkEnd('https://a.com/[x]')).toBe('https://a.com/[x]'.length);
    expect(autolinkEnd('https://a.com/x).')).toBe('https://a.com/x'.length);
  });
});
