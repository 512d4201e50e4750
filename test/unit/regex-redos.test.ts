/**
 * Every regular expression in jobs/ passes a ReDoS analysis (issue 23): recheck
 * (https://makenowjust-labs.github.io/recheck/) must find each one safe, i.e. without super-linear backtracking on
 * any input. The regexes are found in the source, not listed by hand, so a new one is checked the day it is written:
 *  - literals: TypeScript's parser reads every jobs/**\/*.ts and yields its RegularExpressionLiteral nodes;
 *  - `new RegExp(…)`: their patterns are built from constants (word lists, shared fragments), so they are taken at
 *    run time: RegExp is wrapped while each module holding one is imported, and every pattern a module builds at
 *    its top level is recorded by the file and line that built it. A `new RegExp` inside a function is an error
 *    unless DYNAMIC_SITES says why it needs no check.
 * A pattern recheck cannot call safe passes only if ALLOWED names it and says why, or if the verdict is the
 * fuzzer's: a 'vulnerable' verdict of recheck's fuzzer is put to the test: its attack string, pumped k and 4·k
 * times, must take less than 16 times as long (linear is 4; the fuzzer extrapolates from short strings, and bounded
 * repetitions such as `{0,4}` fool it). A verdict of recheck's automaton checker is a proof and always fails.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { check, type Diagnostics, type Parameters } from 'recheck';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';

const JOBS = fileURLToPath(new URL('../../jobs/', import.meta.url));

/**
 * recheck's limits: its fuzzer counts an attack string that runs past `attackTimeout` as a success, so the
 * wall-clock limits are five times its defaults (a slower machine must not turn a safe pattern vulnerable);
 * without them (step limits only) a run takes ten times as long. `timeout` bounds one pattern's analysis: the
 * largest (STREET_RE, ~700 street words) takes ~20 s here and ends 'unknown' on a machine three times slower.
 */
const PARAMS: Parameters = { timeout: 60_000, attackTimeout: 5_000, incubationTimeout: 1_250, seedingTimeout: 500 };

/** Patterns recheck cannot prove safe, by `file NAME`, and why each is linear all the same. */
const ALLOWED: Record<string, string> = {
  // Every repetition that can meet a word is bounded ({1,2}, {0,3}, {0,4}) and a match starts only at a word start
  // (BOUNDARY's lookbehind): each start reads at most a few words. recheck's fuzzer, from run to run, finds them
  // safe, reports an attack ('Two Two Ten Ten…' as 2nd degree, 'One-Two-Six Ten Ten…' as 4th) extrapolated from
  // short strings, or runs out of time; pumped long, the attacks grow linearly (checked below; the number-word,
  // name-word and unit shapes of test/unit/job-adversarial-inputs.test.ts too). The street-type alternation (~700
  // words) is too large for recheck's exact (automaton) checker.
  'airgap-scrub/addresses.ts STREET_RE': 'bounded word repetitions; linear when pumped',
  'airgap-scrub/addresses.ts STREET_LOWER_RE': 'bounded word repetitions; linear when pumped',
};

/**
 * `new RegExp` sites inside functions, by `file`, and why they need no check here: the only one compiles
 * libphonenumber's national number patterns (Google's metadata, data not code of ours), anchored and applied to a
 * national number of at most 13 digits (national-phones.ts drops longer candidates first).
 */
const DYNAMIC_SITES: Record<string, string> = {
  'airgap-scrub/national-phones.ts': "libphonenumber's metadata patterns, on at most 13 digits",
};

interface Pattern {
  /** `file NAME` (the const it is assigned to) or `file:line`. */
  key: string;
  source: string;
  flags: string;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** The const a node's value is assigned to, if any (`const X_RE = /…/`). */
function assignedName(node: ts.Node): string | undefined {
  const parent = node.parent;
  return parent && ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name) ? parent.name.text : undefined;
}

function insideFunction(node: ts.Node): boolean {
  for (let n = node.parent; n; n = n.parent)
    if (ts.isFunctionLike(n) || ts.isClassStaticBlockDeclaration(n)) return true;
  return false;
}

interface Site {
  file: string;
  line: number;
  name: string | undefined;
}

/** The literals and the `new RegExp` sites of one file. */
function scan(path: string): { literals: Pattern[]; sites: Site[] } {
  const file = relative(JOBS, path);
  const sf = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const literals: Pattern[] = [];
  const sites: Site[] = [];
  const visit = (node: ts.Node): void => {
    const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
    if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
      const text = node.getText(sf);
      const slash = text.lastIndexOf('/');
      const name = assignedName(node);
      literals.push({
        key: name ? `${file} ${name}` : `${file}:${line}`,
        source: text.slice(1, slash),
        flags: text.slice(slash + 1),
      });
    }
    if (
      (ts.isNewExpression(node) || ts.isCallExpression(node)) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === 'RegExp'
    ) {
      if (!insideFunction(node)) sites.push({ file, line, name: assignedName(node) });
      else expect(DYNAMIC_SITES[file], `${file}:${line}: new RegExp inside a function`).toBeDefined();
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return { literals, sites };
}

/** The patterns the modules holding `sites` build at their top level, found by the file and line that built them. */
async function constructed(sites: readonly Site[]): Promise<Pattern[]> {
  const Native = RegExp;
  const built = new Map<string, RegExp>();
  globalThis.RegExp = new Proxy(Native, {
    construct(target, args, newTarget) {
      const re = Reflect.construct(target, args, newTarget) as RegExp;
      // Frame 0 is this trap, frame 1 the code that called `new RegExp`.
      const caller = new Error().stack?.split('\n').slice(2, 3)[0] ?? '';
      const at = /([^\s(]+\.ts):(\d+):\d+\)?$/.exec(caller);
      const path = at?.[1] ?? '';
      if (path.includes(JOBS)) built.set(`${relative(JOBS, path.slice(path.indexOf(JOBS)))}:${at![2]}`, re);
      return re;
    },
  });
  try {
    for (const file of new Set(sites.map((s) => s.file))) await import(pathToFileURL(join(JOBS, file)).href);
  } finally {
    globalThis.RegExp = Native;
  }
  return sites.map((s) => {
    const re = built.get(`${s.file}:${s.line}`);
    expect(re, `${s.file}:${s.line}: new RegExp not built when the module loads`).toBeDefined();
    return { key: s.name ? `${s.file} ${s.name}` : `${s.file}:${s.line}`, source: re!.source, flags: re!.flags };
  });
}

/** recheck checks the pattern; `g`, `y` and `d` change where matching starts or what it reports, not its cost. */
/**
 * recheck's verdict on `p`. An analysis that ran out of time says nothing about the pattern, only about the
 * machine's load (a loaded CI machine is several times slower): it is run again, once, with four times the time.
 */
async function analyse(p: Pattern): Promise<Diagnostics> {
  const flags = p.flags.replace(/[gyd]/g, '');
  const first = await check(p.source, flags, PARAMS);
  if (first.status !== 'unknown' || first.error.kind !== 'timeout') return first;
  return check(p.source, flags, { ...PARAMS, timeout: 4 * PARAMS.timeout! });
}

/** ms per run of `re` over `input` (all matches), median of three. */
function timeMatches(re: RegExp, input: string): number {
  const times = [0, 1, 2].map(() => {
    const global = new RegExp(re.source, re.flags.includes('g') ? re.flags : `${re.flags}g`);
    const t0 = performance.now();
    for (const m of input.matchAll(global)) void m;
    return performance.now() - t0;
  });
  return times.sort((a, b) => a - b)[1]!;
}

/** The growth of `p` on recheck's attack pumped k and 4·k times, k doubled until a run takes a few ms. */
function pumpedGrowth(p: Pattern, d: Extract<Diagnostics, { status: 'vulnerable' }>): { k: number; ratio: number } {
  const re = new RegExp(p.source, p.flags);
  const attack = (k: number) => d.attack.pumps.map((x) => x.prefix + x.pump.repeat(k)).join('') + d.attack.suffix;
  let k = 250;
  timeMatches(re, attack(k));
  let ms = timeMatches(re, attack(k));
  while (ms < 4 && k < 64_000) ms = timeMatches(re, attack((k *= 2)));
  return { k, ratio: timeMatches(re, attack(4 * k)) / ms };
}

const files = sourceFiles(JOBS).sort();
const scanned = files.map(scan);
const literals = scanned.flatMap((s) => s.literals);
const sites = scanned.flatMap((s) => s.sites);
const checked: { pattern: string; status: string; note: string }[] = [];

afterAll(() => {
  const unsafe = checked.filter((c) => c.status !== 'safe');
  console.log(
    `recheck: ${checked.length} regexes in jobs/ (${literals.length} literals, ${sites.length} built with new RegExp);` +
      ' not safe:',
  );
  console.table(unsafe);
});

async function expectSafe(patterns: readonly Pattern[]): Promise<void> {
  const problems: string[] = [];
  for (const p of patterns) {
    const d = await analyse(p);
    let note = '';
    if (d.status !== 'safe') {
      const why = ALLOWED[p.key];
      // A fuzzer's verdict is extrapolated from short strings and differs from run to run (one CI run called a
      // linear tracking-number pattern quadratic): it is put to the test with its own attack, pumped long. A
      // verdict of the automaton checker is a proof and fails at once.
      const fuzzed = d.status === 'vulnerable' && d.checker === 'fuzz' ? pumpedGrowth(p, d) : undefined;
      if (!why && fuzzed && fuzzed.ratio < 16)
        note = `fuzzer's verdict refuted: ${describeVerdict(d)}; pumped ${fuzzed.k}→${4 * fuzzed.k}: ×${fuzzed.ratio.toFixed(1)}`;
      else if (!why) problems.push(`${p.key} /${p.source.slice(0, 120)}/${p.flags}: ${describeVerdict(d)}`);
      else if (d.status === 'vulnerable') {
        const g = pumpedGrowth(p, d);
        note = `${why}; ${describeVerdict(d)}; pumped ${g.k}→${4 * g.k}: ×${g.ratio.toFixed(1)}`;
        if (g.ratio >= 16)
          problems.push(`${p.key}: allowed, but its attack grows ×${g.ratio.toFixed(1)} for 4× the pumps`);
      } else note = `${why}; ${describeVerdict(d)}`;
    }
    checked.push({ pattern: p.key, status: d.status, note });
  }
  expect(problems, problems.join('\n')).toEqual([]);
}

function describeVerdict(d: Diagnostics): string {
  if (d.status === 'vulnerable') return `${d.complexity.summary}, attack ${d.attack.pattern.slice(0, 80)}`;
  if (d.status === 'unknown') return `unknown (${d.error.kind}${'message' in d.error ? `: ${d.error.message}` : ''})`;
  return d.status;
}

/** Generous: recheck takes up to tens of seconds on the largest patterns, and CI machines are slower. */
const TIMEOUT_MS = 15 * 60_000;

describe('recheck: every regex in jobs/ is safe from ReDoS', () => {
  it('finds the regexes (literals and new RegExp) of every module', () => {
    expect(files.length).toBeGreaterThan(40);
    expect(literals.length).toBeGreaterThan(150);
    expect(sites.length).toBeGreaterThan(10);
  });

  for (const dir of [...new Set(literals.map((p) => p.key.split('/')[0]!))]) {
    const mine = literals.filter((p) => p.key.split('/')[0] === dir);
    it(`${dir}: ${mine.length} regex literals`, () => expectSafe(mine), TIMEOUT_MS);
  }

  it(
    `the ${sites.length} patterns built with new RegExp at module level`,
    async () => expectSafe(await constructed(sites)),
    TIMEOUT_MS,
  );
});
