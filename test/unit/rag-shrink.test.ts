/**
 * rag-shrink's processor on realistic pages (test/fixtures/html: a news
 * article, a docs page, a blog post with comments): what is kept (title,
 * headings, paragraphs, list items, blockquotes, code blocks, tables) in
 * document order, what is dropped (navigation, page header and footer,
 * asides, ads, cookie banners, share bars, related links, comments, forms,
 * scripts, styles, hidden elements), links only with keepLinks, the size
 * statistics and input errors. Latency next to @mozilla/readability +
 * turndown on the same pages is a bench figure (npm run bench:utility).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { RagShrinkOutput } from '../../jobs/rag-shrink/sku.js';
import { JobError } from '../../core/queue/queue.js';
import { createRagShrinkProcessor, type RagShrinkResponse } from '../../jobs/rag-shrink/processor.js';
import { jobContext, processorDeps } from '../helpers/text-skus.js';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/html/${name}.html`, import.meta.url), 'utf8');
const NEWS = fixture('news-article');
const DOCS = fixture('docs-page');
const BLOG = fixture('blog-with-comments');

const processor = await createRagShrinkProcessor(processorDeps());
async function shrink(html: string, keepLinks?: boolean): Promise<RagShrinkResponse> {
  const body = await processor.handle(keepLinks === undefined ? { html } : { html, keepLinks }, jobContext());
  const check = RagShrinkOutput.safeParse(body);
  expect(check.success, JSON.stringify(check.error?.issues)).toBe(true);
  return body;
}

/** Asserts each needle appears in `text`, in this order. */
function expectInOrder(text: string, needles: string[]): void {
  let at = -1;
  for (const needle of needles) {
    const i = text.indexOf(needle, at + 1);
    expect(i, `"${needle}" after position ${at}`).toBeGreaterThan(at);
    at = i;
  }
}

const expectAbsent = (text: string, needles: string[]) => {
  for (const needle of needles) expect(text, needle).not.toContain(needle);
};

describe('rag-shrink: news article', () => {
  it('keeps the article in order as Markdown and drops the page chrome', async () => {
    const body = await shrink(NEWS);
    expect(body.title).toBe('City Council Approves Riverside Flood Barrier After Two-Year Debate | The Harbor Gazette');
    expect(body.headings).toEqual([
      'City Council Approves Riverside Flood Barrier After Two-Year Debate',
      'What the plan includes',
      'Opposition and costs',
      'What happens next',
    ]);
    expectInOrder(body.content, [
      '# City Council Approves Riverside Flood Barrier After Two-Year Debate',
      'The city council voted 7–2 on Tuesday night to fund a $48 million flood barrier',
      '## What the plan includes',
      '- An earthen levee between the ferry terminal and Mill Street',
      '- A maintenance fund financed by a small surcharge on water bills.',
      '> “We cannot ask the people of Riverside to bail out their basements every autumn. This barrier is overdue.”\n>\n> — Councillor Maya Ortiz',
      '## Opposition and costs',
      '## What happens next',
      '1. The state environmental review, expected to take nine months.\n2. A public comment period of 60 days.\n3. Final design and bidding in early 2026.',
      'Residents can read the full engineering report',
    ]);
    expectAbsent(body.content, [
      'cookies', // cookie banner (role=dialog, class cookie-banner)
      'Politics', // primary nav
      'Search the Gazette', // search form
      'mattress', // leaderboard ad
      'Refinance today', // in-article ad
      'Share on X', // share bar
      'Related coverage', // aside
      'Get the morning briefing', // newsletter form
      'Internal note', // display:none
      'Recommended for you', // recommended section
      'Most read', // sidebar
      'All rights reserved', // site footer
      'Skip to content',
      'gtag',
      'NewsArticle', // JSON-LD
      'font-size', // style
      'Home ›', // breadcrumbs
    ]);
    expect(body.links).toEqual([]);
    expect(body.content).not.toMatch(/\]\(|<[a-z]/); // no links, no markup
  });

  it('keeps links as Markdown (and lists them) only with keepLinks', async () => {
    const body = await shrink(NEWS, true);
    expect(body.content).toContain('By [Dana Whitfield](/staff/dana-whitfield) · March 11, 2025');
    expect(body.links).toEqual([{ text: 'Dana Whitfield', href: '/staff/dana-whitfield' }]);
    // Links in dropped blocks stay dropped.
    expect(body.content).not.toContain('/privacy');
  });

  it('reports the size statistics and the token estimate', async () => {
    const body = await shrink(NEWS);
    expect(body.original_length).toBe(NEWS.length);
    expect(body.shrunk_length).toBe(body.content.length);
    expect(body.reduction_pct).toBeCloseTo((1 - body.content.length / NEWS.length) * 100, 2);
    expect(body.tokens_saved_estimate).toBe(Math.ceil(NEWS.length / 4) - Math.ceil(body.content.length / 4));
    expect(body.reduction_pct).toBeGreaterThan(60);
  });
});

describe('rag-shrink: docs page', () => {
  it('keeps the docs content with its table and code block, drops sidebars, TOC and navigation', async () => {
    const body = await shrink(DOCS);
    expect(body.title).toBe('Rate limits — Quarry API Reference');
    // The headline that repeats the page title is the `title`, not content (as Readability reads it).
    expect(body.headings).toEqual([
      'Default limits',
      'Response headers',
      'Handling 429 responses',
      'Batching requests',
    ]);
    expectInOrder(body.content, [
      'Limits apply per API key, not per IP address.',
      '## Default limits',
      '| Plan | Requests per minute | Burst |\n| --- | --- | --- |\n| Free | 60 | 10 |\n| Team | 600 | 100 |\n| Enterprise | 6,000 | 1,000 |',
      '- `X-RateLimit-Limit`: requests allowed in the current window.',
      'answers `429 Too Many Requests` with a `Retry-After` header',
      '```python\nimport time, requests\n\ndef get_with_retry(url, key, attempts=5):\n    for i in range(attempts):',
      '    raise RuntimeError("rate limited")\n```',
      '> Do not retry immediately in a tight loop',
      '### Batching requests',
      'One batched call counts as a single request against your limit.',
    ]);
    expectAbsent(body.content, [
      'Quarry v4 is out',
      'SDKs',
      'Search docs',
      'Authentication',
      'On this page',
      'Was this page helpful',
      'Pagination →',
      'Copyright',
      'localStorage',
      '--accent',
    ]);
  });
});

describe('rag-shrink: blog post with comments', () => {
  it('keeps the post (nested lists indented), drops comments, reply form, related posts and widgets', async () => {
    const body = await shrink(BLOG);
    expect(body.title).toBe('Why I switched my home server to ZFS – Tinkering Notes'); // &#8211; decoded
    expect(body.content).not.toContain('# Why I switched my home server to ZFS');
    expectInOrder(body.content, [
      'under `mdadm` with ext4 on top',
      '## The problem with silent corruption',
      '## The migration, step by step',
      '1. Back up everything twice (one copy offsite).\n2. Create the pool on two new disks:\n   - `zpool create tank mirror /dev/sdb /dev/sdc`\n   - Set `compression=lz4` and `atime=off`.\n3. Copy the data',
      '> Have you ever lost data you could not get back?',
      '## Six months later',
      'saved me from my own `rm -rf` twice.',
    ]);
    expectAbsent(body.content, [
      'btrfs',
      'ECC RAM',
      'Leave a Reply',
      'Post Comment',
      'Share this',
      'Building a silent NAS case',
      'Recent Posts',
      'Pi-hole',
      'Proudly powered',
      'This site uses cookies',
      'Homelab, Linux',
      'wpcomments',
    ]);
  });
});

describe('rag-shrink: fragments and input errors', () => {
  it('accepts a fragment or bare text, and answers the catalogue example', async () => {
    expect((await shrink('<p>Hello <b>world</b></p><script>x()</script>')).content).toBe('Hello world');
    expect((await shrink('plain   text')).content).toBe('plain text');
    const example = await shrink(
      '<html><head><title>Doc</title></head><body><h1>Intro</h1><p>Hello</p><script>x()</script></body></html>',
    );
    // Headings inside the content start at level 2: the page's own title is `title`.
    expect(example).toMatchObject({
      content: '## Intro\n\nHello',
      title: 'Doc',
      headings: ['Intro'],
      links: [],
      shrunk_length: 15,
    });
    expect((await shrink('<title>Page</title><h2>Part</h2><p>x</p>')).content).toBe('## Part\n\nx');
  });

  it('answers coded 400s for input the schema refuses', async () => {
    for (const [data, field] of [
      [{ html: '' }, 'html'],
      [{ html: '<p>x</p>', keepLinks: 'yes' }, 'keepLinks'],
      [{ html: '<p>x</p>', x: 1 }, 'x'],
    ] as const) {
      const err = await processor.handle(data, jobContext()).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(JobError);
      expect(err).toMatchObject({ status: 400, details: { field } });
    }
  });
});

describe('rag-shrink: the page kinds issue 14 found wanting', () => {
  const page = (name: string) => readFileSync(new URL(`../fixtures/html/issue-14/${name}`, import.meta.url), 'utf8');

  it('reads an article laid out in tables (text in <td> with <br>), without its menu column', async () => {
    const body = await shrink(page('table-layout.html'));
    expectInOrder(body.content, [
      'Spring regatta moves to the north basin',
      'voted on Tuesday to move the spring regatta to the north basin',
      'The new course is 1,500 metres long with six lanes',
      'Volunteers for the timing team should speak to the race secretary',
      'provide two rescue launches.',
    ]);
    expectAbsent(body.content, ['Results', 'Calendar', 'Best viewed', 'All rights reserved']);
  });

  it('reads a blog post made of <div>s, not just its title', async () => {
    const body = await shrink(page('div-blog.html'));
    expect(body.content.length).toBeGreaterThan(400);
    expectInOrder(body.content, [
      'the broad beans finally went in',
      'double rows',
      'covered them with netting',
      'first storm.',
    ]);
    expectAbsent(body.content, ['Recent posts', 'Seed order', 'Powered by']);
  });

  it('keeps a listing page whole when Readability finds no article in it', async () => {
    const body = await shrink(page('listing.html'));
    expect(body.title).toBe('Timetable changes | Ferry Line');
    expectInOrder(body.content, [
      '- Route 1: the 06:10 departure moves',
      '- Route 2: no sailings',
      '- Route 3: an extra evening',
      '- Route 4: the harbour stop closes',
      '| Route | From | To |',
      '| 2 | Old town | Island |',
    ]);
    expectAbsent(body.content, ['Search', '© Ferry Line']);
  });

  it('drops article furniture: subscribe calls, related sections, time stamps, photo credits', async () => {
    const prose = (n: number, from = 1) =>
      Array.from(
        { length: n },
        (_, i) =>
          `<p>Paragraph ${i + from} of the story says something about the new bridge, its cost and the ferry services it will replace over the coming years.</p>`,
      ).join('');
    const html = `<html><head><title>Bridge</title></head><body><article><h1>Bridge approved</h1><p>Posted: Fri 6:45 PM, Feb 16, 2018</p>${prose(4)}<figure><img src="a.jpg"><p>The old ferry at dawn (Image: GETTY )</p></figure>${prose(3, 5)}<p>SUBSCRIBE</p><h2>You may also like</h2><ul><li>Harbour dredging begins</li><li>New buses for the island</li></ul><h2>What happens next</h2>${prose(2, 8)}</article></body></html>`;
    const body = await shrink(html);
    expectInOrder(body.content, [
      'Paragraph 1 of the story',
      'Paragraph 7 of the story',
      '## What happens next',
      'Paragraph 9 of the story',
    ]);
    expectAbsent(body.content, ['Posted:', 'GETTY', 'SUBSCRIBE', 'You may also like', 'Harbour dredging begins']);
    expect(body.headings).not.toContain('You may also like');
  });
});
