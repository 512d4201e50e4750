/**
 * The slice of the DOM rag-shrink reads (linkedom's types lean on the DOM
 * lib, which this project does not load), and the parse of a page or a
 * fragment into a whole document, its nesting capped first (html-depth-cap.ts).
 */
import { parseHTML } from 'linkedom';
import { capHtmlDepth } from '../html-depth-cap.js';

/** The part of the DOM this walk uses (linkedom's types lean on the DOM lib, which this project does not load). */
export interface DomNode {
  nodeType: number;
  nodeName: string;
  childNodes: ArrayLike<DomNode>;
  textContent: string | null;
  parentNode: DomNode | null;
}
export interface DomElement extends DomNode {
  tagName: string;
  getAttribute(name: string): string | null;
  hasAttribute(name: string): boolean;
  querySelector(selector: string): DomElement | null;
  querySelectorAll(selector: string): ArrayLike<DomElement>;
}
export interface DomDocument {
  documentElement: DomElement | null;
  body: DomElement | null;
  title: string;
  querySelector(selector: string): DomElement | null;
  querySelectorAll(selector: string): ArrayLike<DomElement>;
}

export const ELEMENT = 1;
export const TEXT = 3;

export function contains(outer: DomNode, inner: DomNode): boolean {
  for (let p: DomNode | null = inner; p; p = p.parentNode) if (p === outer) return true;
  return false;
}

/**
 * linkedom wants a whole document: fragments and bare text are wrapped in one. Elements past MAX_HTML_DEPTH levels
 * are flattened into their ancestor at the cap (../html-depth-cap.ts), so every walk of the tree is linear.
 */
export function parse(page: string): DomDocument {
  const html = capHtmlDepth(page);
  const whole = /<html[\s>]/i.test(html);
  const source = whole
    ? html
    : `<!DOCTYPE html><html>${/<(?:body|head)[\s>]/i.test(html) ? html : `<head></head><body>${html}</body>`}</html>`;
  const { document } = parseHTML(source) as unknown as { document: DomDocument };
  if (!document.documentElement || !document.body) {
    return (
      parseHTML(`<!DOCTYPE html><html><head></head><body>${html}</body></html>`) as unknown as { document: DomDocument }
    ).document;
  }
  return document;
}
