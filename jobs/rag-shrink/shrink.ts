/**
 * HTML semantic denoising for RAG (jobs/rag-shrink/README.md): the page is
 * parsed by a real HTML parser (linkedom, on htmlparser2), its main content
 * found (main-content.ts: Readability, or the semantic root), and walked
 * into Markdown (markdown.ts) without the noise (noise.ts).
 */
import { dropFurniture } from './boilerplate.js';
import { parse, type DomDocument, type DomElement } from './dom.js';
import { isLinkBlock, readabilityRoot, semanticRoot } from './main-content.js';
import { collapse, toMarkdown, type MarkdownBlocks } from './markdown.js';

export interface ShrinkResult {
  content: string;
  title: string | null;
  headings: string[];
  links: { text: string; href: string }[];
}

export interface ShrinkOptions {
  keepLinks: boolean;
  /** Rules not applied (noise.ts NOISE_RULES, boilerplate.ts FURNITURE_RULES, `link-block`): the rules bench only. */
  off?: ReadonlySet<string>;
}

export function shrinkHtml(html: string, options: ShrinkOptions): ShrinkResult {
  return shrinkRead(html, readPage(html), options);
}

/** A page parsed and read by Readability: what shrinkRead needs besides the options. */
export interface ReadPage {
  title: string | null;
  article: DomElement | undefined;
}

/** Parses `html` and finds its article (the expensive part; the rules bench reads each page once). */
export function readPage(html: string): ReadPage {
  const document = parse(html);
  const title = pageTitle(document);
  return { title, article: readabilityRoot(document) };
}

/** The Markdown of a page read by readPage (which it does not change). */
export function shrinkRead(html: string, { title, article }: ReadPage, options: ShrinkOptions): ShrinkResult {
  const drop = options.off?.has('link-block') ? undefined : isLinkBlock;
  const md = article ? toMarkdown(article, { ...options, drop }) : undefined;
  // Readability found no article, or only a scrap of what the page holds (a listing, a form page): the semantic root.
  if (!md || wordsOf(md.blocks) < 25) {
    const semantic = toMarkdown(semanticRoot(parse(html)), options);
    if (!md || wordsOf(semantic.blocks) > 2 * wordsOf(md.blocks)) return result(semantic, title);
  }
  md.blocks = dropFurniture(md.blocks, options.off);
  const kept = new Set(md.blocks.filter((b) => /^#{1,6} /.test(b)).map((b) => b.replace(/^#{1,6} /, '')));
  md.headings = md.headings.filter((h) => kept.has(h));
  return result(md, title);
}

function result(md: MarkdownBlocks, title: string | null): ShrinkResult {
  const content = md.blocks.join('\n\n');
  return { content, title, headings: md.headings, links: md.links };
}

const wordsOf = (blocks: readonly string[]): number =>
  blocks.reduce((n, b) => n + (b.match(/[\p{L}\p{N}]+/gu) ?? []).length, 0);

function pageTitle(document: DomDocument): string | null {
  const candidates = [
    document.querySelector('title')?.textContent,
    document.querySelector('meta[property="og:title"]')?.getAttribute('content'),
    document.querySelector('h1')?.textContent,
  ];
  for (const c of candidates) {
    const t = c ? collapse(c).trim() : '';
    if (t) return t;
  }
  return null;
}
