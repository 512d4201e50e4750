/**
 * From fetched bytes to stealth-dom content: decoding (charset from the
 * header, a BOM, or the document's <meta>), then per format:
 *  - `markdown`: main content by @mozilla/readability on a linkedom document,
 *    converted by turndown (ATX headings, fenced code, `-` bullets), titled
 *    with the article's title; a page readability cannot read (no article)
 *    falls back to its <body> without scripts, styles, navigation, headers,
 *    footers, asides, forms and iframes;
 *  - `text`: the same main content as plain text, block elements on their own
 *    lines;
 *  - `raw`: the decoded source.
 * Non-HTML text (plain, Markdown) is returned as it is in every format;
 * JSON, XML, CSS, JavaScript and CSV become a fenced block in `markdown`.
 */
import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import TurndownService from 'turndown';
import { capHtmlDepth } from '../html-depth-cap.js';
import { budgetMarkup } from './markup-budget.js';

export type Format = 'markdown' | 'text' | 'raw';
export type DocumentKind = 'html' | 'plain' | 'code';

export const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);

/** Which media types stealth-dom reads: HTML, text and structured text; never binaries. */
export function isReadableMediaType(mediaType: string | null): boolean {
  if (mediaType === null) return true; // decided by sniffing the body (NUL bytes = binary)
  if (mediaType.startsWith('text/')) return true;
  if (HTML_TYPES.has(mediaType)) return true;
  return (
    mediaType === 'application/json' ||
    mediaType === 'application/xml' ||
    mediaType === 'application/javascript' ||
    mediaType === 'application/ecmascript' ||
    /^application\/[a-z0-9.+-]+\+(json|xml)$/.test(mediaType)
  );
}
export const READABLE_DESCRIPTION =
  'text/html, application/xhtml+xml, text/*, application/json, application/xml and their +json/+xml variants';

/** What the fetched body is, from its media type or, when the server sent none, from its first bytes. */
export function classify(
  mediaType: string | null,
  body: Buffer,
): { kind: DocumentKind; language: string } | { binary: true } {
  if (mediaType === null) {
    const head = body.subarray(0, 1024);
    if (head.includes(0)) return { binary: true };
    const start = head.toString('latin1').trimStart().slice(0, 200).toLowerCase();
    if (start.startsWith('<!doctype html') || start.startsWith('<html') || /<(head|body|title)[\s>]/.test(start))
      return { kind: 'html', language: 'html' };
    return { kind: 'plain', language: '' };
  }
  if (HTML_TYPES.has(mediaType)) return { kind: 'html', language: 'html' };
  if (mediaType === 'text/plain' || mediaType === 'text/markdown' || mediaType === 'text/x-markdown')
    return { kind: 'plain', language: '' };
  if (mediaType.includes('json')) return { kind: 'code', language: 'json' };
  if (mediaType.includes('xml')) return { kind: 'code', language: 'xml' };
  if (mediaType === 'text/css') return { kind: 'code', language: 'css' };
  if (mediaType.includes('javascript') || mediaType.includes('ecmascript'))
    return { kind: 'code', language: 'javascript' };
  if (mediaType === 'text/csv') return { kind: 'code', language: 'csv' };
  return { kind: 'plain', language: '' };
}

/** Charset: Content-Type parameter, then a byte-order mark, then an HTML <meta> in the first 1024 bytes; UTF-8 otherwise. */
export function decode(body: Buffer, headerCharset: string | null, kind: DocumentKind): string {
  let label = headerCharset;
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) label = 'utf-8';
  else if (body[0] === 0xff && body[1] === 0xfe) label = 'utf-16le';
  else if (body[0] === 0xfe && body[1] === 0xff) label = 'utf-16be';
  else if (!label && kind === 'html') {
    const head = body.subarray(0, 1024).toString('latin1');
    label = metaCharset(head)?.toLowerCase() ?? null;
  }
  try {
    return new TextDecoder(label ?? 'utf-8').decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body); // unknown label
  }
}

/** A <meta> tag, up to its closing bracket. */
const META_TAG_RE = /<meta[^>]+/gi;
const CHARSET_RE = /charset\s*=\s*(?:["']\s*)?([A-Za-z0-9_.:-]+)/gi;

/**
 * The charset a <meta> tag declares: in the first tag that declares one, its last declaration. Tag by tag, where
 * `/<meta[^>]+charset…/` rescanned a tag from every "<meta" inside it (cubic on `<meta<meta…charset=   …`).
 */
function metaCharset(head: string): string | undefined {
  for (const tag of head.matchAll(META_TAG_RE)) {
    let label: string | undefined;
    // After "<meta" and at least one character of the tag, as `[^>]+` had it.
    for (const m of tag[0].slice('<meta'.length + 1).matchAll(CHARSET_RE)) label = m[1];
    if (label) return label;
  }
  return undefined;
}

const turndown = new TurndownService({
  headingStyle: 'atx',
  codeBlockStyle: 'fenced',
  bulletListMarker: '-',
  emDelimiter: '_',
  hr: '---',
});
// Inline images as data: URIs would spend the 10,000 characters on base64: keep their alt text only.
turndown.addRule('dataImages', {
  filter: (node) => node.nodeName === 'IMG' && (node.getAttribute('src') ?? '').startsWith('data:'),
  replacement: (_content, node) => (node as { getAttribute(n: string): string | null }).getAttribute('alt') ?? '',
});

// turndown pads bullets to four columns (`-   item`); plain `- item` / `1. item` reads the same and costs fewer characters.
turndown.addRule('compactListItem', {
  filter: 'li',
  replacement: (content, node) => {
    const li = node as unknown as {
      parentNode: {
        nodeName: string;
        getAttribute(n: string): string | null;
        children: ArrayLike<{ nodeName: string }>;
      } | null;
      nextSibling: unknown;
    };
    let prefix = '- ';
    if (li.parentNode?.nodeName === 'OL') {
      const items = Array.from(li.parentNode.children).filter((el) => el.nodeName === 'LI');
      const start = Number(li.parentNode.getAttribute('start') ?? 1) || 1;
      prefix = `${start + items.indexOf(li as never)}. `;
    }
    const body = content
      .replace(/^\n+/, '')
      .replace(/(?<!\n)\n+$/, '\n')
      .replace(/\n/gm, `\n${' '.repeat(prefix.length)}`);
    return prefix + body + (li.nextSibling && !/\n$/.test(body) ? '\n' : '');
  },
});

const NOISE =
  'script, style, noscript, template, nav, header, footer, aside, form, iframe, svg, canvas, button, [role=navigation], [aria-hidden=true]';

// linkedom's DOM is typed loosely here: the lib has no DOM typings in this project (lib ES2023).
interface El {
  tagName: string;
  nodeType: number;
  textContent: string | null;
  childNodes: ArrayLike<El>;
  innerHTML: string;
  getAttribute(name: string): string | null;
  setAttribute(name: string, value: string): void;
  querySelectorAll(selector: string): ArrayLike<El>;
  remove(): void;
}

/** Readability cannot resolve links in a linkedom document (no baseURI): make them absolute first. */
function absolutise(document: El, pageUrl: URL): void {
  let base = pageUrl;
  const baseHref = document.querySelectorAll('base[href]')[0]?.getAttribute('href');
  if (baseHref) {
    try {
      base = new URL(baseHref, pageUrl);
    } catch {
      /* keep the page URL */
    }
  }
  for (const [selector, attr] of [
    ['a[href]', 'href'],
    ['img[src]', 'src'],
  ] as const) {
    for (const el of Array.from(document.querySelectorAll(selector))) {
      const value = el.getAttribute(attr) ?? '';
      if (value.startsWith('#') || /^(data|mailto|tel|javascript):/i.test(value)) continue;
      try {
        el.setAttribute(attr, new URL(value, base).href);
      } catch {
        /* leave it */
      }
    }
  }
}

const BLOCKS = new Set([
  'ADDRESS',
  'ARTICLE',
  'ASIDE',
  'BLOCKQUOTE',
  'DD',
  'DETAILS',
  'DIV',
  'DL',
  'DT',
  'FIELDSET',
  'FIGCAPTION',
  'FIGURE',
  'FOOTER',
  'H1',
  'H2',
  'H3',
  'H4',
  'H5',
  'H6',
  'HEADER',
  'HR',
  'LI',
  'MAIN',
  'NAV',
  'OL',
  'P',
  'PRE',
  'SECTION',
  'SUMMARY',
  'TABLE',
  'TBODY',
  'THEAD',
  'TFOOT',
  'TR',
  'UL',
]);

/** How many line breaks end `chunk`, counted back from its end (`/\n*$/` retries from every break of a run). */
function newlinesAtEnd(chunk: string): number {
  let i = chunk.length;
  while (i > 0 && chunk.charCodeAt(i - 1) === 10) i--;
  return chunk.length - i;
}

/**
 * Plain text of an element, block elements on their own lines (what innerText gives in a browser;
 * linkedom has no layout, hence innerText is not available and this walk stands in for it).
 */
function toText(root: El): string {
  const out: string[] = [];
  const trailingNewlines = () => {
    let n = 0;
    for (let i = out.length - 1; i >= 0; i--) {
      const chunk = out[i]!;
      const m = newlinesAtEnd(chunk);
      n += m;
      if (m < chunk.length) break;
    }
    return n;
  };
  /** Ends the current line (1) or paragraph (2) unless the output already does. */
  const boundary = (newlines: number) => {
    if (!out.length) return;
    const missing = newlines - trailingNewlines();
    if (missing > 0) out.push('\n'.repeat(missing));
  };
  const walk = (node: El, pre: boolean) => {
    if (node.nodeType === 3) {
      if (pre) return void out.push(node.textContent ?? '');
      const text = (node.textContent ?? '').replace(/\s+/g, ' ');
      // Whitespace between blocks (indentation of the markup) is not content.
      if (text === ' ' && (out.length === 0 || trailingNewlines() > 0)) return;
      out.push(text);
      return;
    }
    if (node.nodeType !== 1) return;
    const tag = node.tagName.toUpperCase();
    if (tag === 'BR') return void out.push('\n');
    if (tag === 'IMG') {
      const alt = node.getAttribute('alt');
      if (alt) out.push(alt);
      return;
    }
    // List items and table rows: one line each; other blocks: a paragraph each.
    const newlines = tag === 'LI' || tag === 'TR' || tag === 'DT' || tag === 'DD' ? 1 : BLOCKS.has(tag) ? 2 : 0;
    if (newlines) boundary(newlines);
    if (tag === 'LI') out.push('- ');
    if (tag === 'TD' || tag === 'TH') out.push('\t');
    for (const child of Array.from(node.childNodes)) walk(child, pre || tag === 'PRE');
    if (newlines) boundary(newlines);
  };
  walk(root, false);
  return out
    .join('')
    .split('\n')
    .map((line) => line.replace(/(?<![ \t])[ \t]+$/, '').replace(/^[ \t]+/, ''))
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

export interface Extracted {
  content: string;
  title: string | null;
}

/** HTML → main content in `format`. */
export function extractHtml(html: string, pageUrl: URL, format: Format): Extracted {
  if (format === 'raw') return { content: html, title: null };
  // Scripts, styles and comments out, the rest cut at MAX_EXTRACTED_MARKUP (markup-budget.ts); then elements past
  // MAX_HTML_DEPTH levels are flattened into their ancestor at the cap: every walk stays linear.
  const capped = capHtmlDepth(budgetMarkup(html).html);
  const parse = () => {
    const { document } = parseHTML(capped) as unknown as { document: El & { title?: string; body?: El } };
    absolutise(document, pageUrl);
    return document;
  };
  const document = parse();
  const pageTitle = (document.title ?? '').trim() || null;
  // Readability rewrites the document it reads; when it finds no article, the fallback parses again.
  const article = new Readability(document as never, { charThreshold: 200 }).parse();
  let root: El;
  let title = pageTitle;
  let byline: string | null = null;
  if (article?.content) {
    root = (
      parseHTML(`<!doctype html><html><body>${article.content}</body></html>`) as unknown as { document: { body: El } }
    ).document.body;
    title = article.title?.trim() || pageTitle;
    byline = article.byline?.trim() || null;
    if (byline && (root.textContent ?? '').includes(byline)) byline = null;
  } else {
    const fresh = parse();
    root = fresh.body ?? fresh;
    for (const el of Array.from(root.querySelectorAll(NOISE))) el.remove();
  }
  if (format === 'text') {
    const text = toText(root);
    const head = [title && !text.startsWith(title) ? title : null, byline].filter(Boolean);
    return { content: [...head, text].join('\n\n'), title };
  }
  const markdown = turndown.turndown(root.innerHTML).trim();
  const firstLine = markdown.split('\n', 1)[0] ?? '';
  const hasTitle = firstLine.startsWith('#') && firstLine.replace(/^#+\s*/, '').trim() === title;
  const head = [title && !hasTitle ? `# ${title}` : null, byline ? `_${turndown.escape(byline)}_` : null].filter(
    Boolean,
  );
  return { content: [...head, markdown].join('\n\n'), title };
}

/** Non-HTML text in `format`. */
export function extractText(text: string, kind: 'plain' | 'code', language: string, format: Format): string {
  if (format !== 'markdown' || kind === 'plain') return text;
  const fence = text.includes('```') ? '~~~~' : '```';
  return `${fence}${language}\n${text.replace(/\n$/, '')}\n${fence}`;
}

/** Cuts to at most `max` UTF-16 code units without splitting a surrogate pair. */
export function truncate(text: string, max: number): { text: string; truncated: boolean } {
  if (text.length <= max) return { text, truncated: false };
  let end = max;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return { text: text.slice(0, end), truncated: true };
}
