/**
 * Where a page's main content is. Two readers, one answer:
 *
 *  1. Mozilla Readability (the reader view of Firefox; @mozilla/readability)
 *     scores the page's blocks by their text, commas, link density and
 *     class names, keeps the best subtree with its siblings and cleans it
 *     (share bars, bylines, forms, low-text tables and lists). On article
 *     pages it is the best open extractor we measured (jobs/rag-shrink/README.md).
 *  2. The semantic root: <main> (or role=main), else the page's only
 *     <article> (among several, the outermost holding the first h1), else
 *     <body>, with noise.ts's drop rules. It is what stays when Readability
 *     finds no article (a docs page, a listing, a table layout) or keeps only
 *     a fragment of what the semantic root holds as text.
 */
import { Readability } from '@mozilla/readability';
import { contains, type DomDocument, type DomElement } from './dom.js';

/** The page's only <article>, or among several (a post and its comments) the outermost one holding the first h1. */
function mainArticle(document: DomDocument): DomElement | undefined {
  const articles = Array.from(document.querySelectorAll('article'));
  if (articles.length === 1) return articles[0];
  const outer = articles.filter((a) => !articles.some((b) => b !== a && contains(b, a)));
  const h1 = document.querySelector('h1');
  return h1 ? outer.find((a) => contains(a, h1)) : undefined;
}

export function semanticRoot(document: DomDocument): DomElement {
  return (document.querySelector('main') ??
    document.querySelector('[role="main"]') ??
    mainArticle(document) ??
    document.body ??
    document.documentElement)!;
}

/** Readability's article element (it mutates `document`), or undefined when it finds none. */
export function readabilityRoot(document: DomDocument): DomElement | undefined {
  const reader = new Readability(document as unknown as ConstructorParameters<typeof Readability>[0], {
    serializer: (el) => el as unknown as string,
    charThreshold: 300,
    keepClasses: true,
  });
  const article = reader.parse();
  return (article?.content as unknown as DomElement | null | undefined) ?? undefined;
}

const wordCount = (s: string | null) => (s?.match(/[\p{L}\p{N}]+/gu) ?? []).length;

/**
 * A navigation block Readability kept inside its article (a table layout's
 * menu column, a list of section links): three links or more, at most 40
 * words, and at least 80 % of its words in links.
 */
export function isLinkBlock(el: DomElement): boolean {
  if (!/^(?:td|th|div|ul|ol|p|section|nav|span|font|center)$/i.test(el.tagName)) return false;
  const anchors = Array.from(el.querySelectorAll('a'));
  if (anchors.length < 3) return false;
  const words = wordCount(el.textContent);
  if (words === 0 || words > 40) return false;
  const linkWords = anchors.reduce((n, a) => n + wordCount(a.textContent), 0);
  return linkWords / words >= 0.8;
}
