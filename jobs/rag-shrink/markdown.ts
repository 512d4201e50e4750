/**
 * The Markdown walk of rag-shrink: one pass in document order over a content
 * root keeps the semantic blocks (headings, paragraphs, list items,
 * blockquotes, plus code blocks and tables, which docs pages are made of)
 * and skips what noise.ts drops. Inline markup becomes text, `code` becomes
 * backticks, anchors become Markdown links with `keepLinks`.
 */
import { type DomElement, type DomNode, ELEMENT, TEXT } from './dom.js';
import { BLOCK_TAGS, isDropped } from './noise.js';

export const collapse = (s: string) => s.replace(/[\s\u00A0]+/g, ' ');
const escapeTableCell = (s: string) => s.replace(/\|/g, '\\|');
/** Link targets worth keeping: web and mail URLs and relative paths, not scripts or in-page anchors. */
const KEEPABLE_HREF = /^(?:https?:|mailto:|\/|\.\.?\/|[\w.-]+(?:\/|\.html?$|$))/i;

export interface MarkdownBlocks {
  /** Markdown blocks in document order (joined by a blank line they are the content). */
  blocks: string[];
  headings: string[];
  links: { text: string; href: string }[];
}

export interface WalkOptions {
  keepLinks: boolean;
  /** Extra drop rule on top of noise.ts (e.g. the boilerplate blocks of main-content.ts). */
  drop?: (el: DomElement) => boolean;
  /** noise.ts rules not applied (NOISE_RULES; the rules bench). */
  off?: ReadonlySet<string>;
}

export function toMarkdown(root: DomElement, options: WalkOptions): MarkdownBlocks {
  const extraDrop = options.drop;
  const isDroppedHere = (el: DomElement, r: DomElement) =>
    isDropped(el, r, options.off) || (el !== r && extraDrop !== undefined && extraDrop(el));
  const headings: string[] = [];
  const links: { text: string; href: string }[] = [];
  const seenLinks = new Set<string>();

  /** Inline Markdown of an element's content (text, links, code); blocks inside are read as inline text. */
  const inline = (node: DomNode): string => {
    if (node.nodeType === TEXT) return node.textContent ?? '';
    if (node.nodeType !== ELEMENT) return '';
    const el = node as DomElement;
    if (isDroppedHere(el, root)) return '';
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
      if (isDroppedHere(c, root)) continue;
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
      if (isDroppedHere(c, root)) continue;
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
      if (isDroppedHere(li, root)) continue;
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
      const own = Array.from(li.childNodes).filter(
        (c) => !(c.nodeType === ELEMENT && /^(?:ul|ol)$/i.test((c as DomElement).tagName)),
      );
      const text = paragraph(own.map(inline).join('')).replace(/\n/g, ' ');
      if (text) lines.push(`${indent}${marker} ${text}`);
      for (const c of Array.from(li.childNodes)) {
        if (
          c.nodeType === ELEMENT &&
          /^(?:ul|ol)$/i.test((c as DomElement).tagName) &&
          !isDroppedHere(c as DomElement, root)
        ) {
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
      if (isDroppedHere(tr, root)) continue;
      const cells = Array.from(tr.childNodes)
        .filter((c) => c.nodeType === ELEMENT && /^(?:td|th)$/i.test((c as DomElement).tagName))
        .map((c) => escapeTableCell(paragraph(inline(c)).replace(/\n/g, ' ')));
      if (cells.some(Boolean)) rows.push(cells);
    }
    if (rows.length === 0) return;
    const width = Math.max(...rows.map((r) => r.length));
    const pad = (r: string[]) => [...r, ...Array<string>(width - r.length).fill('')];
    const md = [
      `| ${pad(rows[0]!).join(' | ')} |`,
      `|${' --- |'.repeat(width)}`,
      ...rows.slice(1).map((r) => `| ${pad(r).join(' | ')} |`),
    ];
    const caption = el.querySelector('caption');
    if (caption && !isDroppedHere(caption, root)) {
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
        if (inner.length)
          out.push(
            inner
              .map((b) =>
                b
                  .split('\n')
                  .map((l) => `> ${l}`)
                  .join('\n'),
              )
              .join('\n>\n'),
          );
        return;
      }
      case 'pre': {
        // trimEnd removes what `/\s+$/` would, without that regex's retry from every blank of a long run.
        const code = (el.textContent ?? '').replace(/^\n/, '').trimEnd();
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

  return { blocks: blocks(root, []), headings, links };
}
