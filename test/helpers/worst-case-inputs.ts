/**
 * Worst-case inputs for the text SKUs (issue 23, "Job SKUs that cannot be weaponized"): for each SKU, shapes that
 * drive a backtracking regex, a window scan or a parser to its most work per character (long digit runs with every
 * separator, repeated separators, deep or unclosed markup, huge single lines, many tiny lines, pathological
 * Unicode), each as a function of the size wanted (characters). Used by the growth test
 * (test/unit/job-adversarial-inputs.test.ts) and the utility bench (npm run bench:utility).
 */

export interface WorstCase {
  name: string;
  /** The input of `size` characters (within a few of it: a unit is never cut where that would change its shape). */
  make: (size: number) => string;
}

/** `unit` repeated up to `size` characters, after `prefix` and before `suffix`. */
export function repeatTo(unit: string, size: number, prefix = '', suffix = ''): string {
  const room = Math.max(unit.length, size - prefix.length - suffix.length);
  return prefix + unit.repeat(Math.ceil(room / unit.length)).slice(0, room) + suffix;
}

/** `open` nested `size / (open + close)` deep, then closed (or left open), around a word. */
function nested(open: string, close: string, size: number, closed: boolean): string {
  const depth = Math.max(1, Math.floor(size / (open.length + (closed ? close.length : 0))));
  return open.repeat(depth) + 'x' + (closed ? close.repeat(depth) : '');
}

/** airgap-scrub (`text`): the card, phone, SSN, address, ZIP and e-mail detectors. */
export const AIRGAP_SCRUB: readonly WorstCase[] = [
  // The issue's inputs: digit groups a card window scan reads from every start group.
  { name: 'digit groups 12-12-12-…', make: (n) => repeatTo('12-', n) },
  { name: 'card 1 1 1 …', make: (n) => repeatTo('1 ', n, 'card ') },
  { name: 'digit groups 1 1 1 …', make: (n) => repeatTo('1 ', n) },
  { name: 'digit groups 12.12.12.…', make: (n) => repeatTo('12.', n) },
  { name: 'digit groups 12/12/12/…', make: (n) => repeatTo('12/', n) },
  { name: 'four-digit groups 4111.4111.…', make: (n) => repeatTo('4111.', n) },
  { name: 'four-digit groups 4111 4111 …', make: (n) => repeatTo('4111 ', n) },
  { name: 'mixed separators 1-2 3.4/5', make: (n) => repeatTo('1-2 3.4/5 ', n) },
  { name: 'NBSP and en-dash separators', make: (n) => repeatTo('12\u00a034\u201356 ', n) },
  { name: 'one long digit run', make: (n) => repeatTo('7', n) },
  { name: 'repeated dashes', make: (n) => repeatTo('-', n, '1', '1') },
  { name: 'a long run of blanks', make: (n) => repeatTo(' ', n, 'a', 'b') },
  { name: 'a long run of tabs after a PO box', make: (n) => repeatTo('\t', n, 'pob', '.') },
  { name: 'repeated hashes after a card word', make: (n) => repeatTo('#', n, 'cc ', 'x') },
  { name: 'many tiny lines', make: (n) => repeatTo('1\n', n) },
  { name: 'many blank lines', make: (n) => repeatTo('\n', n, '', 'x') },
  { name: 'one huge line of letters', make: (n) => repeatTo('a', n) },
  { name: 'capitalised words', make: (n) => repeatTo('Abc ', n) },
  { name: 'hyphenated capitalised words', make: (n) => repeatTo('Haupt-', n, '', 'straße 5') },
  { name: 'number words', make: (n) => repeatTo('One ', n) },
  { name: 'house number then name words', make: (n) => repeatTo('Main ', n, '12 ') },
  { name: 'street lines', make: (n) => repeatTo('12 Main Street, Springfield, IL 62704\n', n) },
  {
    name: 'capitals glued after a street line',
    make: (n) => repeatTo('12 Main Street WDWDWDWDWDWDWDWDWDWDWDWDWD!\n', n),
  },
  { name: 'unit lines', make: (n) => repeatTo('Flat 1\n', n) },
  { name: 'blanks between a unit word and its number', make: (n) => repeatTo(' ', n, '0 o lane Rm', 'Rt_\n') },
  { name: 'PO boxes', make: (n) => repeatTo('PO Box ', n) },
  { name: 'state and ZIP', make: (n) => repeatTo('NY 12345 ', n) },
  { name: 'Canadian postcodes', make: (n) => repeatTo('K1A 0B1 ', n) },
  { name: 'city quotes before a state', make: (n) => repeatTo("A'", n, 'a', ' NY 12345') },
  { name: 'dotted local parts', make: (n) => repeatTo('a.', n, '', '@') },
  { name: 'e-mail fragments', make: (n) => repeatTo('a@b.', n) },
  { name: 'obfuscated e-mail words', make: (n) => repeatTo('x at y dot ', n) },
  { name: 'plus signs', make: (n) => repeatTo('+1 ', n) },
  { name: 'bracketed area codes', make: (n) => repeatTo('(12) ', n) },
  { name: 'false extensions', make: (n) => repeatTo('020 7946 0958, 212 ', n) },
  { name: 'extension markers after blanks', make: (n) => repeatTo('\t', n, '+44 20 7946 0958', 'EX0') },
  { name: 'phone keywords and local numbers', make: (n) => repeatTo('call 555-0123 ', n) },
  { name: 'international numbers', make: (n) => repeatTo('+44 20 7946 0958 ', n) },
  { name: 'SSN keywords', make: (n) => repeatTo('SS#', n, '', ' 123456789') },
  { name: 'SSNs', make: (n) => repeatTo('SSN 412-58-3391 ', n) },
  { name: 'combining marks', make: (n) => repeatTo('a\u0301', n) },
  { name: 'right-to-left marks between digits', make: (n) => repeatTo('\u200f1 ', n) },
  { name: 'emoji and full-width digits', make: (n) => repeatTo('😀１２３ ', n) },
  // The structured-text pass, field evidence and keep rules (issue 23, item 6).
  { name: 'CSV rows of state, zip, amount', make: (n) => repeatTo('CA,94642,700.77\n', n, 'state,zip,total\n') },
  { name: 'one CSV row of many cells', make: (n) => repeatTo('1,', n) },
  { name: 'unclosed quoted CSV cells', make: (n) => repeatTo('"a,', n, 'a,b,c\n') },
  { name: 'nested quote markers', make: (n) => repeatTo('> ', n, '', '12 Kingsway\n> London SW1A 1AA') },
  { name: 'quoted reply lines', make: (n) => repeatTo('> 138 Kingsway\n> London\n> WC2B 6NH\n', n) },
  { name: 'JSON keys without values', make: (n) => repeatTo('"zip":', n) },
  { name: 'JSON members', make: (n) => repeatTo('{"zip": "94642", "ssn": "123456789"}\n', n) },
  { name: 'unclosed JSON strings', make: (n) => repeatTo('"a', n) },
  { name: 'key=value tokens', make: (n) => repeatTo('a=1 ', n) },
  { name: 'query strings', make: (n) => repeatTo('zip=94642&', n) },
  { name: 'form lines', make: (n) => repeatTo('Phone: 020 7946 0958\n', n) },
  { name: 'dot leaders', make: (n) => repeatTo('.', n, 'Applicant ', ' x') },
  { name: 'prefixed identifiers', make: (n) => repeatTo('INV-2023-', n) },
  { name: 'letters glued to digits', make: (n) => repeatTo('a1', n) },
  { name: 'dotted version parts', make: (n) => repeatTo('1.', n) },
  { name: 'timestamps', make: (n) => repeatTo('26.09.2025 21:42 ', n) },
  { name: 'colons between hex groups', make: (n) => repeatTo('ab:', n) },
  { name: 'tracking words and groups', make: (n) => repeatTo('tracking 1234 ', n) },
  { name: 'numbers before UK postcodes', make: (n) => repeatTo('12 A, ', n, '', 'SW1A 1AA') },
  { name: 'exit codes', make: (n) => repeatTo('0044 ', n) },
];

/** The issue's inputs at the sizes it timed (before the fix: 1.1 s, 10 s, 50 s). */
export const AIRGAP_ISSUE_INPUTS: readonly { name: string; text: string }[] = [
  { name: '400 groups of 12-', text: '12-'.repeat(400) },
  { name: '800 groups of 12-', text: '12-'.repeat(800) },
  { name: 'card + 1,600 groups of 1', text: `card ${'1 '.repeat(1600)}` },
];

/** code-denoise (`code`, per language): unclosed comments and strings, deep nesting, many comments, long lines. */
export const CODE_DENOISE: readonly (WorstCase & { language: string })[] = [
  { language: 'javascript', name: 'unclosed block comments', make: (n) => repeatTo('/*a', n) },
  { language: 'javascript', name: 'deep brackets', make: (n) => nested('(', ')', n, true) },
  { language: 'javascript', name: 'unclosed brackets', make: (n) => nested('[{(', '', n, false) },
  { language: 'javascript', name: 'many line comments', make: (n) => repeatTo('//c\n', n) },
  { language: 'javascript', name: 'unclosed template interpolations', make: (n) => repeatTo('`${', n) },
  { language: 'javascript', name: 'one huge line', make: (n) => repeatTo('a+', n, 'x=', '1;') },
  { language: 'typescript', name: 'deep generics', make: (n) => nested('A<', '>', n, false) },
  { language: 'python', name: 'unclosed docstrings', make: (n) => repeatTo('"""a\n', n) },
  { language: 'python', name: 'deep brackets', make: (n) => nested('(', ')', n, true) },
  { language: 'python', name: 'many comments', make: (n) => repeatTo('#c\n', n) },
  {
    language: 'go',
    name: 'a comment group before import "C"',
    make: (n) => repeatTo('//c\n', n, 'package p\n', 'import "C"\n'),
  },
  { language: 'go', name: 'unclosed block comments', make: (n) => repeatTo('/*\n', n, 'package p\n') },
  { language: 'css', name: 'unclosed comments and braces', make: (n) => repeatTo('a{/*', n) },
  { language: 'html', name: 'deep unclosed elements', make: (n) => repeatTo('<div>', n) },
  { language: 'html', name: 'unclosed comments', make: (n) => repeatTo('<!--', n) },
  { language: 'html', name: 'scripts with comments', make: (n) => repeatTo('<script>/*a*/</script>', n) },
  { language: 'jsonc', name: 'deep arrays', make: (n) => nested('[', ']', n, true) },
  { language: 'jsonc', name: 'unclosed comments', make: (n) => repeatTo('/*', n) },
  { language: 'shell', name: 'many comments', make: (n) => repeatTo('#c\n', n) },
  { language: 'shell', name: 'deep command substitutions', make: (n) => nested('$(', ')', n, true) },
  { language: 'sql', name: 'line comments', make: (n) => repeatTo('--c\n', n) },
  { language: 'sql', name: 'unclosed block comments', make: (n) => repeatTo('/*', n) },
  { language: 'mysql', name: 'hash comments', make: (n) => repeatTo('#c\n', n) },
  { language: 'rust', name: 'nested block comments', make: (n) => nested('/*', '*/', n, true) },
  { language: 'java', name: 'unclosed strings', make: (n) => repeatTo('"a\n', n) },
  { language: 'c', name: 'preprocessor lines', make: (n) => repeatTo('#if x\n', n) },
  { language: 'cpp', name: 'deep templates', make: (n) => nested('a<', '>', n, false) },
];

/** HTML (rag-shrink's `html`, stealth-dom's fetched pages): deep or unclosed markup, many blocks, huge text. */
export const HTML: readonly WorstCase[] = [
  { name: 'deep unclosed divs', make: (n) => repeatTo('<div>', n, '<body>') },
  { name: 'deep closed divs', make: (n) => nested('<div>', '</div>', n, true) },
  { name: 'many paragraphs', make: (n) => repeatTo('<p>Some words here.</p>', n, '<body>') },
  { name: 'many tiny lines in a pre', make: (n) => repeatTo('\n', n, '<body><pre>', 'x</pre><p>end</p>') },
  { name: 'one huge paragraph', make: (n) => repeatTo('word ', n, '<body><p>', '</p>') },
  { name: 'unclosed comments', make: (n) => repeatTo('<!--', n, '<body>') },
  { name: 'many links', make: (n) => repeatTo('<a href="/x">x</a> ', n, '<body><p>', '</p>') },
  { name: 'photo credits', make: (n) => repeatTo('(photo: a', n, '<body><p>', '</p>') },
  { name: 'table cells', make: (n) => repeatTo('<td>1</td>', n, '<body><table><tr>', '</tr></table>') },
  { name: 'meta tags in the head', make: (n) => repeatTo('<meta<meta', n, '<html><head>', ' charset=\t\t=x></head>') },
  { name: 'combining marks', make: (n) => repeatTo('a\u0301', n, '<body><p>', '</p>') },
  // Past the depth cap (jobs/html-depth-cap.ts, 64 levels) and around it.
  {
    name: 'closed chains 150 deep, repeated',
    make: (n) => repeatTo(`${'<div class="c">'.repeat(150)}text${'</div>'.repeat(150)}`, n, '<body>'),
  },
  {
    name: 'stray end tags under deep nesting',
    make: (n) => repeatTo('<div>', Math.floor(n / 2), '<body>') + repeatTo('</span>', Math.ceil(n / 2)),
  },
  { name: 'deep unclosed inline elements', make: (n) => repeatTo('<span><a href="/x"><b>w ', n, '<body><p>') },
  { name: 'deep unclosed lists', make: (n) => repeatTo('<ul><li>item ', n, '<body>') },
  { name: 'deep unclosed tables', make: (n) => repeatTo('<table><tr><td>cell ', n, '<body>') },
  {
    name: 'deep sidebars holding text',
    make: (n) => repeatTo('<div class="sidebar"><p>Some words here.</p>', n, '<body>'),
  },
  { name: 'unclosed scripts past the cap', make: (n) => repeatTo('<script>a<div>', n, `<body>${'<div>'.repeat(200)}`) },
];

/** summarize (`text`): many tiny sentences, one endless sentence, many lines. */
export const SUMMARIZE: readonly WorstCase[] = [
  { name: 'many tiny sentences', make: (n) => repeatTo('A b c. ', n) },
  { name: 'one endless sentence', make: (n) => repeatTo('word ', n) },
  { name: 'many tiny lines', make: (n) => repeatTo('a\n', n) },
  { name: 'repeated punctuation', make: (n) => repeatTo('.!?', n, 'a ') },
  { name: 'combining marks', make: (n) => repeatTo('a\u0301 ', n) },
  // Furniture and verb-less lines: every sentence the selection tries is refused (core/ai/local/summary-sentences.ts).
  { name: 'furniture lines', make: (n) => repeatTo('Photo: Getty Images\nAdvertisement\nContinue reading\n', n) },
  { name: 'verb-less English lines', make: (n) => repeatTo('The big red box of the old town hall and the yard\n', n) },
  { name: 'long verb-less sentences', make: (n) => repeatTo('the big red box of the old town hall ', n, '', '.') },
];

/** x-sentiment (`topic`, at most 2,000 characters): ticker marks, operators, long words. */
export const X_SENTIMENT: readonly WorstCase[] = [
  { name: 'repeated ticker marks', make: (n) => repeatTo('$', n, '', 'BTC') },
  { name: 'search operators', make: (n) => repeatTo('-a OR b:c AND ', n) },
  { name: 'one long word', make: (n) => repeatTo('a', n) },
  { name: 'many blanks', make: (n) => repeatTo(' ', n, 'BTC', 'up') },
];

/**
 * Honest inputs of a given size (phase W's maximum-size timing, issue 23): the public article pages
 * (test/corpus/article-extraction) one after another, as one page (their bodies in one <body>) for the HTML SKUs,
 * and their expected article texts one after another for summarize, cut at `size` characters.
 */
export function honestHtml(pages: readonly { html: string }[], size: number): string {
  const bodies = pages.map((p) => /<body[^>]*>([\s\S]*)<\/body>/i.exec(p.html)?.[1] ?? p.html);
  let out = '<!doctype html><html><head><title>Pages</title></head><body>';
  for (let i = 0; out.length < size; i++) out += bodies[i % bodies.length]!;
  return `${out.slice(0, size - '</body></html>'.length)}</body></html>`;
}

export function honestText(pages: readonly { expected: string }[], size: number): string {
  let out = '';
  for (let i = 0; out.length < size; i++) out += `${pages[i % pages.length]!.expected}\n\n`;
  return out.slice(0, size);
}

/**
 * Real source files installed with the project's dependencies (public code, present after `npm ci`), per
 * code-denoise language: an honest input for the latency target. Paths relative to the repository root.
 */
export const HONEST_CODE_FILES: Readonly<Record<string, readonly string[]>> = {
  javascript: [
    'node_modules/koa/lib/application.js',
    'node_modules/ioredis/built/Redis.js',
    'node_modules/@lezer/javascript/dist/index.js',
    'node_modules/zod/v3/types.js',
  ],
  typescript: ['node_modules/typescript/lib/lib.es5.d.ts'],
  c: ['node_modules/secp256k1/src/secp256k1/src/tests.c'],
  cpp: ['node_modules/node-addon-api/napi-inl.h'],
};

/** The files of `language` one after another, cut at `size` characters. */
export function honestCode(read: (path: string) => string, language: string, size: number): string {
  const files = (HONEST_CODE_FILES[language] ?? []).map(read);
  let out = '';
  for (let i = 0; out.length < size && files.length; i++) out += `${files[i % files.length]!}\n`;
  return out.slice(0, size);
}
