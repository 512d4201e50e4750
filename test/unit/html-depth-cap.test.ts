/**
 * jobs/html-depth-cap.ts: HTML nested past MAX_HTML_DEPTH is flattened before linkedom parses it (issue 23), so
 * the DOM rag-shrink and stealth-dom read is never deeper than the cap, whatever the input, and the text stays.
 * Below the cap the source is returned unchanged.
 */
import { parseHTML } from 'linkedom';
import { describe, expect, it } from 'vitest';
import { capHtmlDepth, MAX_HTML_DEPTH } from '../../jobs/html-depth-cap.js';
import { shrinkHtml } from '../../jobs/rag-shrink/shrink.js';
import { extractHtml } from '../../jobs/stealth-dom/extract.js';

interface Node {
  nodeType: number;
  childNodes: ArrayLike<Node>;
}

/** Deepest element chain of a parsed document (iterative: the inputs are deep). */
function depthOf(html: string): number {
  const { document } = parseHTML(html) as unknown as { document: Node };
  let max = 0;
  const stack: [Node, number][] = [[document, 0]];
  while (stack.length) {
    const [node, d] = stack.pop()!;
    max = Math.max(max, d);
    for (const c of Array.from(node.childNodes)) if (c.nodeType === 1) stack.push([c, d + 1]);
  }
  return max;
}

const words = (s: string) => s.match(/[\p{L}\p{N}]+/gu) ?? [];

describe('capHtmlDepth', () => {
  it('leaves a page within the cap as it is', () => {
    const page = `<!doctype html><html><head><title>T</title><script>if (a < b) x("</div>")</script></head><body>${'<div>'.repeat(50)}<p>one<p>two<ul><li>a<li>b</ul><svg><path/><g/></svg>${'</div>'.repeat(50)}</body></html>`;
    expect(capHtmlDepth(page)).toBe(page);
  });

  it('flattens what lies past the cap and keeps its text, in order', () => {
    const page = `<html><body>${Array.from({ length: 5000 }, (_, i) => `<div><span>w${i} `).join('')}`;
    const capped = capHtmlDepth(page);
    expect(depthOf(capped)).toBeLessThanOrEqual(MAX_HTML_DEPTH + 1);
    expect(words(parseHTML(capped).document.body!.textContent ?? '')).toEqual(
      Array.from({ length: 5000 }, (_, i) => `w${i}`),
    );
  });

  it('keeps words apart where tags are taken out, and keeps void elements', () => {
    const capped = capHtmlDepth(`<body>${'<b>'.repeat(200)}one<i>two</i><img alt="pic">three`);
    expect(words(capped.replace(/<[^>]*>/g, ' '))).toEqual(['one', 'two', 'three']);
    expect(capped).toContain('<img alt="pic">');
  });

  it('drops a script or a style past the cap with its content, which would otherwise become text', () => {
    const capped = capHtmlDepth(
      `<html><body>${'<div>'.repeat(200)}a<script>var s = "<div>";</script><style>p{}</style>b`,
    );
    expect(capped).not.toContain('var s');
    expect(capped).not.toContain('p{}');
    expect(words(parseHTML(capped).document.body!.textContent ?? '')).toEqual(['a', 'b']);
  });

  it('counts depth as htmlparser2 builds the tree: implied closes and self-closing tags in SVG add none', () => {
    // 300 paragraphs and list items close each other; 300 self-closing SVG shapes close themselves.
    const page = `<body>${'<p>x'.repeat(300)}<ul>${'<li>y'.repeat(300)}</ul><svg>${'<g/>'.repeat(300)}</svg>`;
    expect(capHtmlDepth(page)).toBe(page);
  });

  it('bounds the depth whatever the closing tags do (stray end tags, unclosed tables and lists)', () => {
    for (const page of [
      `<body>${'<div>'.repeat(3000)}${'</span>'.repeat(3000)}x`,
      `<body>${'<table><tr><td>c'.repeat(2000)}`,
      `<body>${'<ul><li>i'.repeat(2000)}`,
      `<body><svg>${'<g>'.repeat(3000)}<path/></svg><p>after`,
    ])
      expect(depthOf(capHtmlDepth(page)), page.slice(0, 40)).toBeLessThanOrEqual(MAX_HTML_DEPTH + 1);
  });
});

describe('rag-shrink and stealth-dom on 25,000 unclosed divs', () => {
  // Before the cap: linkedom overflowed the stack near 4,000 levels, and 2,000 levels took rag-shrink 11 s.
  // 125,000 characters: within stealth-dom's markup budget (jobs/stealth-dom/markup-budget.ts), so the text is read.
  const page = `<html><body>${'<div>'.repeat(25_000)}deep text here`;
  it('rag-shrink returns the text', () => {
    expect(shrinkHtml(page, { keepLinks: false }).content).toContain('deep text here');
  });
  it('stealth-dom returns the text', () => {
    expect(extractHtml(page, new URL('https://example.com/'), 'text').content).toContain('deep text here');
  });
});
