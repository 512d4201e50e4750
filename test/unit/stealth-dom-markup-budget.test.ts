/**
 * stealth-dom's markup budget (jobs/stealth-dom/markup-budget.ts): scripts, styles and comments out, the rest
 * cut at the budget on a tag's start, in one pass whatever the page holds.
 */
import { describe, expect, it } from 'vitest';
import { budgetMarkup, MAX_EXTRACTED_MARKUP } from '../../jobs/stealth-dom/markup-budget.js';
import { extractHtml } from '../../jobs/stealth-dom/extract.js';

describe('budgetMarkup', () => {
  it('takes out scripts, styles and comments, and keeps everything else byte for byte', () => {
    const html =
      '<html><head><style>p{color:red}</style><script src="a.js"></script></head><body><!-- note --><!--<![endif]-->' +
      '<p>One <b>two</b></p><SCRIPT>if (a < b) { x("</p>") }</SCRIPT><p>three</p></body></html>';
    const out = budgetMarkup(html);
    expect(out.html).toBe('<html><head></head><body><p>One <b>two</b></p><p>three</p></body></html>');
    expect(out.cut).toBe(false);
    expect(out.dropped).toBe(html.length - out.html.length);
  });

  it('drops an unclosed script to the end, as a browser would', () => {
    expect(budgetMarkup('<p>a</p><script>var s = "<p>b</p>";').html).toBe('<p>a</p>');
  });

  it('cuts what remains at the budget, on the start of a tag', () => {
    const page = `<body>${'<p>Some words of the article.</p>'.repeat(1000)}</body>`;
    const out = budgetMarkup(page, 10_000);
    expect(out.cut).toBe(true);
    expect(out.html.length).toBeLessThanOrEqual(10_000);
    expect(out.html.endsWith('</p>')).toBe(true);
    expect(page.startsWith(out.html)).toBe(true);
  });

  it('a page whose head is megabytes of scripts still gives its article', () => {
    const scripts = `<script>${'var x = 1;'.repeat(200_000)}</script>`;
    const article = `<article><h1>Title</h1>${'<p>A sentence of the story that matters here.</p>'.repeat(100)}</article>`;
    const page = `<html><head>${scripts}</head><body>${article}</body></html>`;
    expect(page.length).toBeGreaterThan(MAX_EXTRACTED_MARKUP);
    const { content } = extractHtml(page, new URL('https://example.com/story'), 'markdown');
    expect(content).toContain('A sentence of the story that matters here.');
  });

  it('runs in one pass on hostile shapes (a guard against super-linear growth, not a timing target)', () => {
    for (const unit of ['<script>', '<!--', '<style', '</script>', '<', '<?']) {
      const input = unit.repeat(Math.ceil(4_000_000 / unit.length));
      const t0 = performance.now();
      budgetMarkup(input);
      expect(performance.now() - t0, unit).toBeLessThan(30_000);
    }
  });
});
