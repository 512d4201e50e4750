/**
 * What rag-shrink never keeps, judged element by element: scripts, styles,
 * media, navigation, page headers and footers, asides, forms, dialogs,
 * hidden elements, and blocks whose class or id says ads, cookie banner,
 * share bar, related links, comments, newsletter and the like
 * (jobs/rag-shrink/README.md, "What is dropped").
 */
import { type DomElement, type DomNode, ELEMENT } from './dom.js';

/** Never content. */
const DROPPED_TAGS = new Set([
  'head',
  'title',
  'script',
  'style',
  'noscript',
  'template',
  'svg',
  'math',
  'canvas',
  'iframe',
  'object',
  'embed',
  'video',
  'audio',
  'picture',
  'img',
  'map',
  'nav',
  'aside',
  'form',
  'button',
  'input',
  'select',
  'textarea',
  'option',
  'label',
  'dialog',
  'menu',
  'footer',
  'link',
  'meta',
  'source',
  'track',
  'area',
  'frame',
  'frameset',
  'slot',
]);
const DROPPED_ROLES = new Set([
  'navigation',
  'contentinfo',
  'complementary',
  'search',
  'dialog',
  'alertdialog',
  'menu',
  'menubar',
  'toolbar',
  'banner',
  'tablist',
  'status',
]);
/** Class/id tokens of boilerplate (split on spaces, dashes, underscores; lower-cased). */
const NOISE_TOKENS = new Set([
  'ad',
  'ads',
  'adv',
  'advert',
  'adverts',
  'advertisement',
  'advertising',
  'adsense',
  'adslot',
  'adunit',
  'dfp',
  'sponsor',
  'sponsored',
  'promo',
  'promoted',
  'banner',
  'cookie',
  'cookies',
  'consent',
  'gdpr',
  'ccpa',
  'newsletter',
  'subscribe',
  'subscription',
  'signup',
  'social',
  'share',
  'sharing',
  'sharebar',
  'related',
  'recommended',
  'recommendations',
  'popular',
  'trending',
  'outbrain',
  'taboola',
  'popup',
  'modal',
  'overlay',
  'breadcrumb',
  'breadcrumbs',
  'pagination',
  'pager',
  'sidebar',
  'widget',
  'comment',
  'comments',
  'disqus',
  'respond',
  'footer',
  'masthead',
  'menu',
  'navbar',
  'nav',
  'navigation',
  'toc',
  'skip',
  'skiplink',
  'hidden',
  'sronly',
  'invisible',
  'print',
  'toolbar',
  'pswp',
]);
/** Distinctive words that mark boilerplate even inside a longer class name ("jp-relatedposts", "sharedaddy"). */
const NOISE_SUBSTRINGS =
  /advert|sponsor|cookie|consent|newsletter|related|comment|disqus|sidebar|breadcrumb|pagination|outbrain|taboola|social|share|subscribe|popup|banner|masthead/;
/** Tokens that mark content: an element with one of these is not dropped by the class heuristics. */
const CONTENT_TOKENS = new Set([
  'article',
  'content',
  'main',
  'post',
  'entry',
  'story',
  'body',
  'text',
  'prose',
  'markdown',
  'documentation',
]);
const HIDDEN_CLASSES =
  /(?:^|\s)(?:hidden|d-none|sr-only|visually-hidden|screen-reader-text|is-hidden|invisible|u-hidden)(?:\s|$)/i;
const HIDDEN_STYLE = /(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)\b/i;

export const BLOCK_TAGS = new Set([
  'address',
  'article',
  'blockquote',
  'body',
  'dd',
  'details',
  'div',
  'dl',
  'dt',
  'fieldset',
  'figcaption',
  'figure',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'header',
  'hgroup',
  'hr',
  'li',
  'main',
  'ol',
  'p',
  'pre',
  'section',
  'summary',
  'table',
  'ul',
  'center',
  'html',
  'caption',
  'thead',
  'tbody',
  'tfoot',
  'tr',
  'td',
  'th',
]);

function tokensOf(el: DomElement): string[] {
  const raw = `${el.getAttribute('class') ?? ''} ${el.getAttribute('id') ?? ''}`.toLowerCase();
  return raw.split(/[\s_-]+/).filter(Boolean);
}

function hasAncestor(el: DomElement, tags: ReadonlySet<string>, stop: DomNode): boolean {
  for (let p = el.parentNode; p && p !== stop; p = p.parentNode)
    if (p.nodeType === ELEMENT && tags.has((p as DomElement).tagName.toLowerCase())) return true;
  return false;
}

const ARTICLE_OR_MAIN = new Set(['article', 'main']);

/** Whether an element and everything in it is noise. `root` is the content root (never dropped). */
export function isDropped(el: DomElement, root: DomElement): boolean {
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
  if (
    tokens.some((t) => NOISE_TOKENS.has(t) || NOISE_SUBSTRINGS.test(t)) &&
    !tokens.some((t) => CONTENT_TOKENS.has(t))
  ) {
    // A wrapper that holds the page's main content is layout, not noise ("layout-with-sidebar").
    if (el.querySelector('main, [role="main"], h1')) return false;
    return true;
  }
  return false;
}
