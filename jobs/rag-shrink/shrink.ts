/**
 * HTML semantic denoising for RAG (docs/skus/rag-shrink.md): the page is
 * parsed by a real HTML parser (linkedom, on htmlparser2), then one walk in
 * document order keeps the semantic blocks (headings, paragraphs, list
 * items, blockquotes, plus code blocks and tables, which docs pages are made
 * of) as Markdown, and skips the noise: scripts, styles, navigation, page
 * headers and footers, asides, forms, dialogs, hidden elements, and blocks
 * whose class or id says ads, cookie banner, share bar, related links,
 * comments, newsletter and the like.
 *
 * Where the content is: <main> (or role=main) when the page has one, else its
 * only <article>, else <body>.
 */
import { parseHTML } from 'linkedom';

/** The part of the DOM this walk uses (linkedom's types lean on the DOM lib, which this project does not load). */
interface DomNode {
  nodeType: number;
  nodeName: string;
  childNodes: ArrayLike<DomNode>;
  textContent: string | null;
  parentNode: DomNode | null;
}
interface DomElement extends DomNode {
  tagName: string;
  getAttribute(name: string): string | null;
  hasAttribute(name: string): boolean;
  querySelector(selector: string): DomElement | null;
  querySelectorAll(selector: string): ArrayLike<DomElement>;
}
interface DomDocument {
  documentElement: DomElement | null;
  body: DomElement | null;
  title: string;
  querySelector(selector: string): DomElement | null;
  querySelectorAll(selector: string): ArrayLike<DomElement>;
}

const ELEMENT = 1;
const TEXT = 3;

export interface ShrinkResult {
  content: string;
  title: string | null;
  headings: string[];
  links: { text: string; href: string }[];
}

/** Never content. */
const DROPPED_TAGS = new Set([
  'head', 'title', 'script', 'style', 'noscript', 'template', 'svg', 'math', 'canvas', 'iframe', 'object', 'embed', 'video', 'audio',
  'picture', 'img', 'map', 'nav', 'aside', 'form', 'button', 'input', 'select', 'textarea', 'option', 'label', 'dialog',
  'menu', 'footer', 'link', 'meta', 'source', 'track', 'area', 'frame', 'frameset', 'slot',
]);
const DROPPED_ROLES = new Set(['navigation', 'contentinfo', 'complementary', 'search', 'dialog', 'alertdialog', 'menu', 'menubar', 'toolbar', 'banner', 'tablist', 'status']);
/** Class/id tokens of boilerplate (split on spaces, dashes, underscores; lower-cased). */
const NOISE_TOKENS = new Set([
  'ad', 'ads', 'adv', 'advert', 'adverts', 'advertisement', 'advertising', 'adsense', 'adslot', 'adunit', 'dfp', 'sponsor', 'sponsored',
  'promo', 'promoted', 'banner', 'cookie', 'cookies', 'consent', 'gdpr', 'ccpa', 'newsletter', 'subscribe', 'subscription', 'signup',
  'social', 'share', 'sharing', 'sharebar', 'related', 'recommended', 'recommendations', 'popular', 'trending', 'outbrain', 'taboola',
  'popup', 'modal', 'overlay', 'breadcrumb', 'breadcrumbs', 'pagination', 'pager', 'sidebar', 'widget', 'comment', 'comments',
  'disqus', 'respond', 'footer', 'masthead', 'menu', 'navbar', 'nav', 'navigation', 'toc', 'skip', 'skiplink', 'paywall', 'hidden',
  'sronly', 'invisible', 'print', 'toolbar', 'pswp',
]);
/** Distinctive words that mark boilerplate even inside a longer class name ("jp-relatedposts", "sharedaddy"). */
const NOISE_SUBSTRINGS = /advert|sponsor|cookie|consent|newsletter|related|comment|disqus|sidebar|breadcrumb|pagination|outbrain|taboola|social|share|subscribe|popup|banner|masthead/;
/** Tokens that mark content: an element with one of these is not dropped by the class heuristics. */
const CONTENT_TOKENS = new Set(['article', 'content', 'main', 'post', 'entry', 'story', 'body', 'text', 'prose', 'markdown', 'documentation']);
const HIDDEN_CLASSES = /(?:^|\s)(?:hidden|d-none|sr-only|visually-hidden|screen-reader-text|is-hidden|invisible|u-hidden)(?:\s|$)/i;
const HIDDEN_STYLE = /(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)\b/i;

const BLOCK_TAGS = new Set([
  'address', 'article', 'blockquote', 'body', 'dd', 'details', 'div', 'dl', 'dt', 'fieldset', 'figcaption', 'figure', 'h1', 'h2', 'h3',
  'h4', 'h5', 'h6', 'header', 'hgroup', 'hr', 'li', 'main', 'ol', 'p', 'pre', 'section', 'summary', 'table', 'ul', 'center', 'html',
  'caption', 'thead', 'tbody', 'tfoot', 'tr', 'td', 'th',
]);

function tokensOf(el: DomElement): string[] {
  const raw = `${el.getAttribute('class') ?? ''} ${el.getAttribute('id') ?? ''}`.toLowerCase();
  return raw.split(/[\s_-]+/).filter(Boolean);
}

function hasAncestor(el: DomElement, tags: ReadonlySet<string>, stop: DomNode): boolean {
  for (let p = el.parentNode; p && p !== stop; p = p.parentNode) if (p.nodeType === ELEMENT && tags.has((p as DomElement).tagName.toLowerCase())) return true;
  return false;
}

const ARTICLE_OR_MAIN = new Set(['article', 'main']);

/** Whether an element and everything in it is noise. `root` is the content root (never dropped). */
function isDropped(el: DomElement, root: DomElement): boolean {
  if (el === root) return false;
  const tag = el.tagName.toLowerCase();
  if (DROPPED_TAGS.has(tag)) return true;
  // A page header (site banner) is noise; an article's own header (title, byline) is not.
  if (tag === 'header' && !hasAncestor(el, ARTICLE_OR_MAIN, root) && root.tagName.toLowerCase() === 'body') return true;
  if (el.hasAttribute('hidden') || el.getAttribute('aria-hidden') === 'true') return true;
  const role = el.getAttribute('role')?.toLowerCase();
  if (role && DROPPED_ROLES.has(role) && !(role === 'banner' && hasAncestor(el, ARTICLE_OR_MAIN, root))) return true;
  const style = el.getAttribute('style');
  if (style && HIDDEN_STYLE.test(style)) return true;
  const cls = el.getAttribute('class');
  if (cls && HIDDEN_CLASSES.test(cls)) return true;
  const tokens = tokensOf(el);
  if (tokens.some((t) => NOISE_TOKENS.has(t) || NOISE_SUBSTRINGS.test(t)) && !tokens.some((t) => CONTENT_TOKENS.has(t))) {
    // A wrapper that holds the page's main content is layout, not noise ("layout-with-sidebar").
    if (el.querySelector('main, [role="main"], h1')) return false;
    return true;
  }
  return false;
}

const collapse = (s: string) => s.replace(/[\s\u00A0]+/g, ' ');
const escapeTableCell = (s: string) => s.replace(/\|/g, '\\|');
/** Link targets worth keeping: web and mail URLs and relative paths, not scripts or in-page anchors. */
const KEEPABLE_HREF = /^(?:https?:|mailto:|\/|\.\.?\/|[\w.-]+(?:\/|\.html?$|$))/i;

export function shrinkHtml(html: string, options: { keepLinks: boolean }): ShrinkResult {
  const document = parse(html);
  const title = pageTitle(document);
  const root = (document.querySelector('main') ?? document.querySelector('[role="main"]') ?? mainArticle(document) ?? document.body ?? document.documentElement)!;
  const headings: string[] = [];
  const links: { text: string; href: string }[] = [];
  const seenLinks = new Set<string>();

  /** Inline Markdown of an element's content (text, links, code); blocks inside are read as inline text. */
  const inline = (node: DomNode): string => {
    if (node.nodeType === TEXT) return node.textContent ?? '';
    if (node.nodeType !== ELEMENT) return '';
    const el = node as DomElement;
    if (isDropped(el, root)) return '';
    const tag = el.tagName.toLowerCase();
    if (tag === 'br') return '\n';
    const inner = Array.from(el.childNodes, inline).join('');
    if (tag === 'code' || tag === 'kbd' || tag === 'samp') {
      const code = collapse(inner).trim();
      return code ? `\`${code.replace(/`/g, 'ˋ')}\`` : '';
    }
    if (tag === 'a' && options.keepLinks) {
      const href = el.getAttribute('href')?.trim() ?? '';
      const text = collapse(inner).trim();
      if (text && href && KEEPABLE_HREF.test(href) && !href.startsWith('#')) {
        const key = `${text}\u0000${href}`;
        if (!seenLinks.has(key)) {
          seenLinks.add(key);
          links.push({ text, href });
        }
        return `[${text.replace(/[[\]]/g, '\\$&')}](${href.replace(/[()\s]/g, encodeURIComponent)})`;
      }
    }
    // Block children read inline are separated from their neighbours.
    return BLOCK_TAGS.has(tag) ? ` ${inner} ` : inner;
  };

  const paragraph = (text: string) =>
    text
      .split('\n')
      .map((l) => collapse(l).trim())
      .filter(Boolean)
      .join('\n');

  /** Markdown blocks of `el`'s children, in document order. */
  const blocks = (el: DomElement, out: string[]): string[] => {
    let run: DomNode[] = [];
    const flush = () => {
      if (run.length === 0) return;
      const text = paragraph(run.map(inline).join(''));
      if (text) out.push(text);
      run = [];
    };
    for (const child of Array.from(el.childNodes)) {
      if (child.nodeType === TEXT) {
        run.push(child);
        continue;
      }
      if (child.nodeType !== ELEMENT) continue;
      const c = child as DomElement;
      if (isDropped(c, root)) continue;
      const tag = c.tagName.toLowerCase();
      if (!BLOCK_TAGS.has(tag) && !containsBlock(c)) {
        run.push(c);
        continue;
      }
      flush();
      block(c, tag, out);
    }
    flush();
    return out;
  };

  const containsBlock = (el: DomElement): boolean => {
    for (const child of Array.from(el.childNodes)) {
      if (child.nodeType !== ELEMENT) continue;
      const c = child as DomElement;
      if (isDropped(c, root)) continue;
      if (BLOCK_TAGS.has(c.tagName.toLowerCase()) || containsBlock(c)) return true;
    }
    return false;
  };

  const list = (el: DomElement, indent: string, out: string[]) => {
    const ordered = el.tagName.toLowerCase() === 'ol';
    let n = Number(el.getAttribute('start') ?? '1');
    if (!Number.isFinite(n)) n = 1;
    const lines: string[] = [];
    for (const child of Array.from(el.childNodes)) {
      if (child.nodeType !== ELEMENT) continue;
      const li = child as DomElement;
      if (isDropped(li, root)) continue;
      if (li.tagName.toLowerCase() !== 'li') {
        // Lists nested directly in lists (invalid but common) stay nested.
        if (/^(?:ul|ol)$/i.test(li.tagName)) {
          const sub: string[] = [];
          list(li, `${indent}  `, sub);
          lines.push(...sub);
        }
        continue;
      }
      const marker = ordered ? `${n++}.` : '-';
      // Nested items start under the parent's text (CommonMark: marker width + 1).
      const childIndent = indent + ' '.repeat(marker.length + 1);
      const own = Array.from(li.childNodes).filter((c) => !(c.nodeType === ELEMENT && /^(?:ul|ol)$/i.test((c as DomElement).tagName)));
      const text = paragraph(own.map(inline).join('')).replace(/\n/g, ' ');
      if (text) lines.push(`${indent}${marker} ${text}`);
      for (const c of Array.from(li.childNodes)) {
        if (c.nodeType === ELEMENT && /^(?:ul|ol)$/i.test((c as DomElement).tagName) && !isDropped(c as DomElement, root)) {
          const sub: string[] = [];
          list(c as DomElement, childIndent, sub);
          lines.push(...sub);
        }
      }
    }
    if (lines.length) out.push(lines.join('\n'));
  };

  const table = (el: DomElement, out: string[]) => {
    const rows: string[][] = [];
    for (const tr of Array.from(el.querySelectorAll('tr'))) {
      if (isDropped(tr, root)) continue;
      const cells = Array.from(tr.childNodes)
        .filter((c) => c.nodeType === ELEMENT && /^(?:td|th)$/i.test((c as DomElement).tagName))
        .map((c) => escapeTableCell(paragraph(inline(c)).replace(/\n/g, ' ')));
      if (cells.some(Boolean)) rows.push(cells);
    }
    if (rows.length === 0) return;
    const width = Math.max(...rows.map((r) => r.length));
    const pad = (r: string[]) => [...r, ...Array<string>(width - r.length).fill('')];
    const md = [`| ${pad(rows[0]!).join(' | ')} |`, `|${' --- |'.repeat(width)}`, ...rows.slice(1).map((r) => `| ${pad(r).join(' | ')} |`)];
    const caption = el.querySelector('caption');
    if (caption && !isDropped(caption, root)) {
      const c = paragraph(inline(caption));
      if (c) out.push(c);
    }
    out.push(md.join('\n'));
  };

  const block = (el: DomElement, tag: string, out: string[]) => {
    const h = /^h([1-6])$/.exec(tag);
    if (h) {
      const text = paragraph(inline(el)).replace(/\n/g, ' ');
      if (text) {
        headings.push(text);
        out.push(`${'#'.repeat(Number(h[1]))} ${text}`);
      }
      return;
    }
    switch (tag) {
      case 'p':
      case 'dt':
      case 'dd':
      case 'figcaption':
      case 'summary':
      case 'address':
      case 'caption': {
        if (containsBlock(el) && tag !== 'p') blocks(el, out);
        else {
          const text = paragraph(inline(el));
          if (text) out.push(text);
        }
        return;
      }
      case 'ul':
      case 'ol':
        list(el, '', out);
        return;
      case 'li': {
        // A list item outside a list.
        const text = paragraph(inline(el)).replace(/\n/g, ' ');
        if (text) out.push(`- ${text}`);
        return;
      }
      case 'blockquote': {
        const inner = blocks(el, []);
        if (inner.length) out.push(inner.map((b) => b.split('\n').map((l) => `> ${l}`).join('\n')).join('\n>\n'));
        return;
      }
      case 'pre': {
        const code = (el.textContent ?? '').replace(/^\n/, '').replace(/\s+$/, '');
        if (!code) return;
        const cls = `${el.getAttribute('class') ?? ''} ${el.querySelector('code')?.getAttribute('class') ?? ''}`;
        const lang = /(?:^|\s)(?:language|lang)-([\w+#.-]+)/.exec(cls)?.[1] ?? '';
        const fence = code.includes('```') ? '````' : '```';
        out.push(`${fence}${lang}\n${code}\n${fence}`);
        return;
      }
      case 'table':
        table(el, out);
        return;
      case 'hr':
        return;
      default:
        blocks(el, out);
    }
  };

  let content = blocks(root, []).join('\n\n');
  // A page whose content has no top heading: its title leads, so chunks keep their context.
  if (title && !/^# /m.test(content)) content = content ? `# ${title}\n\n${content}` : `# ${title}`;
  return { content, title, headings, links };
}

/** The page's only <article>, or among several (a post and its comments) the outermost one holding the first h1. */
function mainArticle(document: DomDocument): DomElement | undefined {
  const articles = Array.from(document.querySelectorAll('article'));
  if (articles.length === 1) return articles[0];
  const outer = articles.filter((a) => !articles.some((b) => b !== a && contains(b, a)));
  const h1 = document.querySelector('h1');
  return h1 ? outer.find((a) => contains(a, h1)) : undefined;
}

function contains(outer: DomNode, inner: DomNode): boolean {
  for (let p: DomNode | null = inner; p; p = p.parentNode) if (p === outer) return true;
  return false;
}

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

/** linkedom wants a whole document: fragments and bare text are wrapped in one. */
function parse(html: string): DomDocument {
  const whole = /<html[\s>]/i.test(html);
  const source = whole ? html : `<!DOCTYPE html><html>${/<(?:body|head)[\s>]/i.test(html) ? html : `<head></head><body>${html}</body>`}</html>`;
  const { document } = parseHTML(source) as unknown as { document: DomDocument };
  if (!document.documentElement || !document.body) {
    return (parseHTML(`<!DOCTYPE html><html><head></head><body>${html}</body></html>`) as unknown as { document: DomDocument }).document;
  }
  return document;
}
