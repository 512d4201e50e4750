/**
 * What rag-shrink never keeps, judged element by element: scripts, styles,
 * media, navigation, page headers and footers, asides, forms, dialogs,
 * hidden elements, and blocks whose class or id says ads, cookie banner,
 * share bar, related links, comments, newsletter and the like
 * (jobs/rag-shrink/README.md, "What is dropped"). The class, id and role
 * rules never drop a container that holds the main text (holdsMainText).
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
/**
 * Class/id words of boilerplate, by rule (the name a rule is scored and switched off by: test/bench/rag-shrink-rules.ts):
 * each rule's whole tokens (class and id split on spaces, dashes, underscores; lower-cased) and, for distinctive
 * words, a pattern found inside a longer token ("jp-relatedposts", "sharedaddy").
 */
export const CLASS_RULES: Readonly<Record<string, { tokens: readonly string[]; inside?: RegExp }>> = {
  ads: {
    tokens: ['ad', 'ads', 'adv', 'advert', 'adverts', 'advertisement', 'advertising', 'adsense', 'adslot', 'adunit'],
    inside: /advert|sponsor/,
  },
  sponsored: { tokens: ['dfp', 'sponsor', 'sponsored', 'promo', 'promoted'] },
  banner: { tokens: ['banner', 'masthead'], inside: /banner|masthead/ },
  cookie: { tokens: ['cookie', 'cookies', 'consent', 'gdpr', 'ccpa'], inside: /cookie|consent/ },
  newsletter: { tokens: ['newsletter', 'subscribe', 'subscription', 'signup'], inside: /newsletter|subscribe/ },
  social: { tokens: ['social', 'share', 'sharing', 'sharebar'], inside: /social|share/ },
  related: {
    tokens: ['related', 'recommended', 'recommendations', 'popular', 'trending', 'outbrain', 'taboola'],
    inside: /related|outbrain|taboola/,
  },
  popup: { tokens: ['popup', 'modal', 'overlay', 'pswp'], inside: /popup/ },
  paging: { tokens: ['breadcrumb', 'breadcrumbs', 'pagination', 'pager'], inside: /breadcrumb|pagination/ },
  // Not `widget`: themes wrap images, videos and their captions in the article as "…-widget-wrapper".
  sidebar: { tokens: ['sidebar'], inside: /sidebar/ },
  comments: { tokens: ['comment', 'comments', 'disqus', 'respond'], inside: /comment|disqus/ },
  footer: { tokens: ['footer'] },
  navigation: { tokens: ['menu', 'navbar', 'nav', 'navigation', 'toc', 'skip', 'skiplink', 'toolbar'] },
  hidden: { tokens: ['hidden', 'sronly', 'invisible', 'print'] },
};
const CLASS_RULE_OF_TOKEN = new Map(
  Object.entries(CLASS_RULES).flatMap(([rule, { tokens }]) => tokens.map((t) => [t, rule] as const)),
);
const CLASS_RULES_INSIDE = Object.entries(CLASS_RULES).flatMap(([rule, { inside }]) =>
  inside ? [[rule, inside] as const] : [],
);

/**
 * Rules of this file that can be switched off (the rules bench scores the corpora with and without each): the class
 * rules above, `role` (DROPPED_ROLES), `page-header` (a <header> outside the article) and `main-text-guard` (the
 * guard that keeps a container holding the main text whatever its class, id or role says).
 */
export const NOISE_RULES = [...Object.keys(CLASS_RULES), 'role', 'page-header', 'main-text-guard'] as const;

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

const split = (s: string | null) =>
  (s ?? '')
    .toLowerCase()
    .split(/[\s_-]+/)
    .filter(Boolean);

/**
 * Class and id tokens. An id of four words or more is a slug of a heading (documentation generators and blogs
 * anchor each section so: `id="sharing-with-a-single-developer"`), not the name of a page component: its words say
 * nothing about what the element is.
 */
function tokensOf(el: DomElement): string[] {
  const cls = split(el.getAttribute('class'));
  const id = split(el.getAttribute('id'));
  return id.length >= 4 ? cls : [...cls, ...id];
}

/** The class rule a token falls under, if any. */
function classRule(token: string): string | undefined {
  const whole = CLASS_RULE_OF_TOKEN.get(token);
  if (whole) return whole;
  for (const [rule, inside] of CLASS_RULES_INSIDE) if (inside.test(token)) return rule;
  return undefined;
}

function hasAncestor(el: DomElement, tags: ReadonlySet<string>, stop: DomNode): boolean {
  for (let p = el.parentNode; p && p !== stop; p = p.parentNode)
    if (p.nodeType === ELEMENT && tags.has((p as DomElement).tagName.toLowerCase())) return true;
  return false;
}

const ARTICLE_OR_MAIN = new Set(['article', 'main']);

/** Letters and digits of a text (what "text" means for the main-text guard: markup and blanks count for nothing). */
const textLengths = new WeakMap<DomNode, number>();
function textLength(node: DomNode): number {
  let n = textLengths.get(node);
  if (n === undefined) textLengths.set(node, (n = (node.textContent ?? '').replace(/[^\p{L}\p{N}]+/gu, '').length));
  return n;
}

/**
 * Whether `el` holds the main text: at least half of the content root's text (letters and digits), and at least
 * 500 of them. A word in a class, id or role ("contentWithSidebar", "layout-footer-sticky", a theme's
 * `role="complementary"` on the post body) never drops such a container: a sidebar, a footer or a comment thread
 * is a minor part of an article's root, and the root is Readability's article or the page's semantic root.
 */
function holdsMainText(el: DomElement, root: DomElement): boolean {
  const total = textLength(root);
  if (total < 500) return false;
  return textLength(el) >= 0.5 * total;
}

/**
 * Whether an element and everything in it is noise. `root` is the content root (never dropped); `off` names rules
 * (NOISE_RULES) not applied (the rules bench).
 */
export function isDropped(el: DomElement, root: DomElement, off?: ReadonlySet<string>): boolean {
  if (el === root) return false;
  const tag = el.tagName.toLowerCase();
  if (DROPPED_TAGS.has(tag)) return true;
  // A page header (site banner) is noise; an article's own header (title, byline) is not.
  if (
    tag === 'header' &&
    !off?.has('page-header') &&
    !hasAncestor(el, ARTICLE_OR_MAIN, root) &&
    root.tagName.toLowerCase() === 'body'
  )
    return true;
  if (el.hasAttribute('hidden') || el.getAttribute('aria-hidden') === 'true') return true;
  const style = el.getAttribute('style');
  if (style && HIDDEN_STYLE.test(style)) return true;
  const cls = el.getAttribute('class');
  if (cls && HIDDEN_CLASSES.test(cls)) return true;
  const role = el.getAttribute('role')?.toLowerCase();
  const byRole =
    !off?.has('role') &&
    role !== undefined &&
    DROPPED_ROLES.has(role) &&
    !(role === 'banner' && hasAncestor(el, ARTICLE_OR_MAIN, root));
  const tokens = byRole ? [] : tokensOf(el);
  const byClass =
    !byRole &&
    tokens.some((t) => {
      const rule = classRule(t);
      return rule !== undefined && !off?.has(rule);
    }) &&
    !tokens.some((t) => CONTENT_TOKENS.has(t));
  if (!byRole && !byClass) return false;
  // A wrapper that holds the page's main content is layout, not noise ("layout-with-sidebar", "contentWithSidebar").
  if (byClass && el.querySelector('main, [role="main"], h1')) return false;
  return off?.has('main-text-guard') === true || !holdsMainText(el, root);
}
