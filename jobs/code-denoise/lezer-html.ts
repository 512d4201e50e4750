/**
 * HTML read by @lezer/html: comments removed; attribute values, textarea text
 * and the content of preformatted elements (pre, textarea, listing, xmp,
 * plaintext) kept byte for byte; script elements of a JavaScript type and
 * style elements denoised as JavaScript and CSS, JSON-typed scripts as JSONC,
 * any other script kept as it is. Error nodes of the embedded code count.
 */
import type { SyntaxNode } from '@lezer/common';
import { parser as htmlParser } from '@lezer/html';
import { denoiseJsonc } from './jsonc.js';
import type { Language } from './languages.js';
import { countErrors, type DenoiseResult } from './lezer-walk.js';
import { normalize, type Edit } from './normalize.js';

const SCRIPT_JS_TYPES =
  /^(?:|module|text\/javascript|application\/javascript|text\/ecmascript|application\/ecmascript|text\/babel|text\/jsx)$/i;
const SCRIPT_JSON_TYPES = /^(?:application\/(?:ld\+)?json|importmap|speculationrules|application\/manifest\+json)$/i;
const PRESERVED_ELEMENTS = /^(?:pre|textarea|listing|xmp|plaintext)$/i;

/** `denoiseEmbedded` reads the JavaScript or CSS of script and style elements. */
export function denoiseHtml(
  source: string,
  denoiseEmbedded: (language: Language, text: string) => DenoiseResult,
): DenoiseResult {
  const tree = htmlParser.parse(source);
  const edits: Edit[] = [];
  let commentsRemoved = 0;
  let syntaxErrors = countErrors(tree);
  const tagName = (element: SyntaxNode) => {
    const open = element.getChild('OpenTag');
    const name = open?.getChild('TagName');
    return name ? source.slice(name.from, name.to).toLowerCase() : '';
  };
  const attribute = (element: SyntaxNode, wanted: string): string | undefined => {
    const open = element.getChild('OpenTag');
    for (const attr of open?.getChildren('Attribute') ?? []) {
      const n = attr.getChild('AttributeName');
      if (!n || source.slice(n.from, n.to).toLowerCase() !== wanted) continue;
      const v = attr.getChild('AttributeValue') ?? attr.getChild('UnquotedAttributeValue');
      return v
        ? source
            .slice(v.from, v.to)
            .replace(/^["']|["']$/g, '')
            .trim()
        : '';
    }
    return undefined;
  };
  const embedded = (node: SyntaxNode, language: Language | 'json' | undefined) => {
    const text = source.slice(node.from, node.to);
    if (!language || /^\s*$/.test(text)) {
      edits.push({ from: node.from, to: node.to, kind: 'keep' });
      return;
    }
    const inner = language === 'json' ? denoiseJsonc(text) : denoiseEmbedded(language, text);
    commentsRemoved += inner.commentsRemoved;
    syntaxErrors += inner.syntaxErrors;
    edits.push({ from: node.from, to: node.to, kind: 'replace', text: inner.code });
  };
  const visit = (node: SyntaxNode): void => {
    switch (node.name) {
      case 'Comment':
        edits.push({ from: node.from, to: node.to, kind: 'remove', sep: '' });
        commentsRemoved++;
        return;
      case 'AttributeValue':
      case 'UnquotedAttributeValue':
      case 'TextareaText':
        edits.push({ from: node.from, to: node.to, kind: 'keep' });
        return;
      case 'ScriptText': {
        const type = node.parent ? (attribute(node.parent, 'type') ?? '') : '';
        embedded(node, SCRIPT_JS_TYPES.test(type) ? 'javascript' : SCRIPT_JSON_TYPES.test(type) ? 'json' : undefined);
        return;
      }
      case 'StyleText':
        embedded(node, 'css');
        return;
      case 'Element': {
        if (PRESERVED_ELEMENTS.test(tagName(node))) {
          const open = node.getChild('OpenTag');
          const close = node.getChild('CloseTag');
          if (open) for (let c = open.firstChild; c; c = c.nextSibling) visit(c);
          const from = open?.to ?? node.from;
          const to = close?.from ?? node.to;
          if (to > from) edits.push({ from, to, kind: 'keep' });
          if (close) for (let c = close.firstChild; c; c = c.nextSibling) visit(c);
          return;
        }
        break;
      }
    }
    for (let c = node.firstChild; c; c = c.nextSibling) visit(c);
  };
  visit(tree.topNode);
  return { code: normalize(source, edits, { keepIndent: false }), commentsRemoved, syntaxErrors };
}
