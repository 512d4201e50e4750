/**
 * rag-shrink's boilerplate rules, each scored on every page of both extraction corpora with and without it
 * (issue 23, item 6): for each rule (noise.ts NOISE_RULES, boilerplate.ts FURNITURE_RULES, main-content.ts's link
 * blocks), the mean bag-of-words F1 with all rules minus the mean with that rule switched off (positive: the rule
 * helps), and the pages it helps and hurts by more than 0.01, on the Zyte sample and on the Readability pages'
 * tuning and kept-aside parts. A rule that costs more than it gains is to be dropped or scoped.
 *
 * Part of `npm run bench:utility` when BENCH_RULES=1 (it parses every page once per rule: minutes); alone:
 * `npx tsx test/bench/rag-shrink-rules.ts`.
 */
import { pathToFileURL } from 'node:url';
import { FURNITURE_RULES } from '../../jobs/rag-shrink/boilerplate.js';
import { NOISE_RULES } from '../../jobs/rag-shrink/noise.js';
import { readPage, shrinkRead, type ReadPage } from '../../jobs/rag-shrink/shrink.js';
import { loadArticleCorpus, wordOverlap, type ArticlePage } from '../helpers/extraction-quality.js';
import { loadReadabilityPages } from '../helpers/readability-pages.js';

const RULES = [...NOISE_RULES, ...FURNITURE_RULES, 'link-block'];

export function printRuleAblation(): void {
  const readability = loadReadabilityPages();
  const sets: { name: string; pages: ArticlePage[] }[] = [
    { name: 'zyte', pages: loadArticleCorpus() },
    { name: 'readability tuning', pages: readability.filter((p) => p.split === 'tuning') },
    { name: 'readability kept aside', pages: readability.filter((p) => p.split === 'kept-aside') },
  ];
  // Readability's reading of a page does not depend on the rules: once per page.
  const read = new Map<ArticlePage, ReadPage>(sets.flatMap((s) => s.pages.map((p) => [p, readPage(p.html)] as const)));
  const f1 = (pages: ArticlePage[], off?: ReadonlySet<string>) =>
    pages.map((p) => wordOverlap(shrinkRead(p.html, read.get(p)!, { keepLinks: false, off }).content, p.expected).f1);
  const all = sets.map((s) => f1(s.pages));
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  console.log(
    `\n### rag-shrink rules: mean F1 with all rules minus without the rule (+ helps), pages helped / hurt by > 0.01\n`,
  );
  console.log(`| rule | ${sets.map((s) => `${s.name} (${s.pages.length}) Δ F1 | helped / hurt`).join(' | ')} |`);
  console.log(`|---|${sets.map(() => '---|---|').join('')}`);
  for (const rule of RULES) {
    const cells = sets.map((s, i) => {
      const without = f1(s.pages, new Set([rule]));
      const base = all[i]!;
      const helped = base.filter((x, j) => x > without[j]! + 0.01).length;
      const hurt = base.filter((x, j) => x < without[j]! - 0.01).length;
      const delta = mean(base) - mean(without);
      return `${delta >= 0 ? '+' : ''}${delta.toFixed(4)} | ${helped} / ${hurt}`;
    });
    console.log(`| ${rule} | ${cells.join(' | ')} |`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) printRuleAblation();
