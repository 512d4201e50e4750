/**
 * HTML semantic denoising for RAG (jobs/rag-shrink/README.md): the page is
 * parsed by a real HTML parser (linkedom, on htmlparser2), its main content
 * found (main-content.ts: Readability, or the semantic root), and walked
 * into Markdown (markdown.ts) without the noise (noise.ts).
 */
import { dropFurniture } from './boilerplate.js';
import { parse, type DomDocument } from './dom.js';
import { isLinkBlock, readabilityRoot, semanticRoot } from './main-content.js';
import { collapse, toMarkdown, type MarkdownBlocks } from './markdown.js';

export interface ShrinkResult {
  content: string;
  title: string | null;
  headings: string[];
  links: { text: string; href: string }[];
}

export function shrinkHtml(html: string, options: { keepLinks: boolean }): ShrinkResult {
  const document = parse(html);
  const title = pageTitle(document);
  const article = readabilityRoot(document);
  const md = article ? toMarkdown(article, { ...options, drop: isLinkBlock }) : undefined;
  // Readability found no article, or only a scrap of what the page holds (a listing, a form page): the semantic root.
  if (!md || wordsOf(md.blocks) < 25) {
    const semantic = toMarkdown(semanticRoot(parse(html)), options);
    if (!md || wordsOf(semantic.blocks) > 2 * wordsOf(md.blocks)) return result(semantic, title);
  }
  md.blocks = dropFurniture(md.blocks);
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
