/**
 * The nesting depth of HTML, capped before the page is parsed into a DOM (rag-shrink, stealth-dom). Past
 * MAX_HTML_DEPTH open elements, further start and end tags are taken out of the source and their text stays where
 * it is (a run of tags becomes one blank, so words on either side stay apart): 200,000 unclosed `<div>`s become 64
 * nested ones holding the text. Chromium's parser flattens the same way past 512 levels
 * (kMaximumHTMLParserDOMTreeDepth); here the cap is lower because the readers walk the tree per element:
 * Readability scores and cleans every block by its descendants, which costs a power of the depth per element, and
 * linkedom and turndown recurse once per level (linkedom overflowed the stack near 4,000 levels; 2,000 unclosed
 * divs took rag-shrink 11 s). With the depth capped, all of that is linear in the input. Real pages stay far
 * below the cap: the 164 pages of the two extraction corpora (test/corpus) are at most 34 levels deep (median 16),
 * and Lighthouse already calls 32 levels excessive.
 *
 * Kept past the cap: void elements (`<br>`, `<img>`: they hold nothing, so they add no depth). Dropped with their
 * content past the cap: the raw-text elements (`<script>`, `<style>`, `<title>`, `<textarea>`, `<xmp>`), whose
 * content would otherwise become page text.
 *
 * The depth is counted as htmlparser2 (linkedom's parser) builds the tree: its tokenizer, its implied closes
 * (`<p>` closed by a block, `<li>` by the next `<li>`, ...), self-closing tags inside `<svg>`/`<math>`, and an end
 * tag closing the nearest open element of its name. htmlparser2's own Parser cannot be used for the count: it keeps
 * its stack with `unshift` and finds end tags with `indexOf`, quadratic on the very inputs this guards against.
 * Here the stack is an array pushed and popped at its end, with a count per tag name, so each tag costs O(1).
 */
import { scanHtmlTags } from './html-tag-scan.js';

/** Open elements at most, counted from the document's root (`<html>` is 1). */
export const MAX_HTML_DEPTH = 64;

/** htmlparser2's openImpliesClose (Parser.js, not exported): opening the key closes open elements in the set. */
const FORM_TAGS = new Set(['input', 'option', 'optgroup', 'select', 'button', 'datalist', 'textarea']);
const P_TAG = new Set(['p']);
const IMPLIED_CLOSES = new Map<string, ReadonlySet<string>>([
  ['tr', new Set(['tr', 'th', 'td'])],
  ['th', new Set(['th'])],
  ['td', new Set(['thead', 'th', 'td'])],
  ['body', new Set(['head', 'link', 'script'])],
  ['li', new Set(['li'])],
  ...['p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((t): [string, ReadonlySet<string>] => [t, P_TAG]),
  ...['select', 'input', 'output', 'button', 'datalist', 'textarea'].map((t): [string, ReadonlySet<string>] => [
    t,
    FORM_TAGS,
  ]),
  ['option', new Set(['option'])],
  ['optgroup', new Set(['optgroup', 'option'])],
  ['dd', new Set(['dd', 'dt'])],
  ['dt', new Set(['dd', 'dt'])],
  ...[
    'address',
    'article',
    'aside',
    'blockquote',
    'details',
    'div',
    'dl',
    'fieldset',
    'figcaption',
    'figure',
    'footer',
    'form',
    'header',
    'hr',
    'main',
    'nav',
    'ol',
    'pre',
    'section',
    'table',
    'ul',
  ].map((t): [string, ReadonlySet<string>] => [t, P_TAG]),
  ['rt', new Set(['rt', 'rp'])],
  ['rp', new Set(['rt', 'rp'])],
  ['tbody', new Set(['thead', 'tbody'])],
  ['tfoot', new Set(['thead', 'tbody'])],
]);
const VOID = new Set([
  'area',
  'base',
  'basefont',
  'br',
  'col',
  'command',
  'embed',
  'frame',
  'hr',
  'img',
  'input',
  'isindex',
  'keygen',
  'link',
  'meta',
  'param',
  'source',
  'track',
  'wbr',
]);
const FOREIGN = new Set(['math', 'svg']);
const HTML_INTEGRATION = new Set(['mi', 'mo', 'mn', 'ms', 'mtext', 'annotation-xml', 'foreignobject', 'desc', 'title']);
/** Elements whose content htmlparser2's tokenizer reads as text up to their end tag. */
const RAW_TEXT = new Set(['script', 'style', 'title', 'textarea', 'xmp']);

interface Open {
  name: string;
  /** Past the cap: its tags are taken out. */
  cut: boolean;
}

/** `html` with every element past `maxDepth` flattened into its ancestor at the cap (see the header). */
export function capHtmlDepth(html: string, maxDepth = MAX_HTML_DEPTH): string {
  const stack: Open[] = [];
  const openByName = new Map<string, number>();
  // htmlparser2's foreign-content flags: true inside <svg>/<math> (self-closing tags close there).
  const foreign: boolean[] = [false];
  /** Source ranges [start, end) to replace by one blank, in increasing order. */
  const cuts: number[] = [];
  let tag: { name: string; start: number; cut: boolean } | undefined;
  /** Start of a raw-text element past the cap: it is cut with its content at its end tag (or the end of input). */
  let rawCutStart = -1;

  const push = (name: string): Open => {
    const el = { name, cut: stack.length >= maxDepth };
    stack.push(el);
    openByName.set(name, (openByName.get(name) ?? 0) + 1);
    return el;
  };
  const pop = (): Open => {
    const el = stack.pop()!;
    openByName.set(el.name, openByName.get(el.name)! - 1);
    return el;
  };
  const cut = (start: number, end: number) => cuts.push(start, end);
  const lower = (start: number, end: number) => html.slice(start, end).toLowerCase();

  const open = (name: string, start: number) => {
    const closes = IMPLIED_CLOSES.get(name);
    if (closes) while (stack.length && closes.has(stack[stack.length - 1]!.name)) pop();
    if (VOID.has(name)) {
      tag = { name, start, cut: false };
      return;
    }
    tag = { name, start, cut: push(name).cut };
    if (FOREIGN.has(name)) foreign.push(true);
    else if (HTML_INTEGRATION.has(name)) foreign.push(false);
  };
  const openEnd = (gt: number) => {
    if (!tag) return;
    if (tag.cut) {
      if (RAW_TEXT.has(tag.name)) rawCutStart = tag.start;
      else cut(tag.start, gt + 1);
    }
    tag = undefined;
  };

  scanHtmlTags(
    html,
    {
      onopentagname: (start, end) => open(lower(start, end), start - 1),
      onopentagend: openEnd,
      onselfclosingtag: (gt) => {
        if (!tag || !foreign[foreign.length - 1]) return openEnd(gt);
        // Inside <svg>/<math>, `<x/>` opens and closes x.
        if (tag.cut) cut(tag.start, gt + 1);
        if (stack[stack.length - 1]?.name === tag.name) pop();
        tag = undefined;
      },
      onclosetag: (start, end) => {
        const name = lower(start, end);
        // The tokenizer skips to the next ">" after the name.
        const gt = html.indexOf('>', end);
        const tagEnd = gt === -1 ? html.length : gt + 1;
        if (FOREIGN.has(name) || HTML_INTEGRATION.has(name)) foreign.pop();
        if (VOID.has(name)) return; // `</br>` is a <br>: no depth.
        if (openByName.get(name)) {
          let el: Open;
          do el = pop();
          while (el.name !== name);
          if (el.cut) {
            if (rawCutStart >= 0) {
              cut(rawCutStart, tagEnd);
              rawCutStart = -1;
            } else cut(start - 2, tagEnd);
          }
        } else if (name === 'p' && stack.length >= maxDepth) cut(start - 2, tagEnd); // `</p>` alone is a <p></p>.
      },
    },
    { decodeEntities: true },
  );
  if (rawCutStart >= 0) cut(rawCutStart, html.length);
  if (!cuts.length) return html;
  const parts: string[] = [];
  let at = 0;
  let blank = false; // a run of cut tags leaves one blank, not one per tag
  for (let i = 0; i < cuts.length; i += 2) {
    const kept = html.slice(at, cuts[i]);
    if (kept) parts.push(kept);
    if (kept || !blank) parts.push(' ');
    blank = true;
    at = cuts[i + 1]!;
  }
  parts.push(html.slice(at));
  return parts.join('');
}
