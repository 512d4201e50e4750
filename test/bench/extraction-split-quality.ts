/**
 * Issue 23's quality tables of `npm run bench:utility` for rag-shrink and summarize, printed after
 * utility-quality.ts's: rag-shrink against the extraction baselines on Mozilla Readability's test pages, tuning and
 * kept-aside parts apart (test/helpers/readability-pages.ts); the summarize furniture rate on both extraction
 * corpora (test/helpers/summary-furniture.ts); and with BENCH_RULES=1 every rag-shrink rule scored with and without
 * it (rag-shrink-rules.ts). test/unit/utility-quality.test.ts asserts the thresholds.
 */
import { createAiProvider } from '../../core/ai/create-ai-provider.js';
import { shrinkHtml } from '../../jobs/rag-shrink/shrink.js';
import {
  loadArticleCorpus,
  pythonBaselines,
  readabilityTurndown,
  wordOverlap,
  type ArticlePage,
} from '../helpers/extraction-quality.js';
import { loadReadabilityPages } from '../helpers/readability-pages.js';
import { FURNITURE_RUNS, scoreSummaryFurniture } from '../helpers/summary-furniture.js';
import { processorDeps } from '../helpers/text-skus.js';
import { printRuleAblation } from './rag-shrink-rules.js';

const f3 = (x: number) => x.toFixed(3);
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

export async function printSplitQualityTables(): Promise<void> {
  printReadabilityPages();
  await printSummaryFurniture();
  if (process.env.BENCH_RULES === '1') printRuleAblation();
}

/** rag-shrink vs the baselines on the Readability pages, tuning and kept-aside parts apart. */
function printReadabilityPages(): void {
  const all = loadReadabilityPages();
  const python = pythonBaselines(all);
  console.log(
    `\n### rag-shrink on Mozilla Readability's test pages (test/corpus/readability-pages: ${all.length} pages; the kept-aside part was not looked at while tuning)\n\nBag-of-words F1 against the text Readability's own tests expect (which favours the Readability baseline).\n`,
  );
  console.log(
    `| part | pages | rag-shrink mean F1 | rag-shrink pages < 0.5 | readability + turndown | ${python.map((b) => b.name).join(' | ')} |`,
  );
  console.log(`|---|---|---|---|---|${python.map(() => '---|').join('')}`);
  for (const split of ['tuning', 'kept-aside'] as const) {
    const pages: ArticlePage[] = all.filter((p) => p.split === split);
    const ours = pages.map((p) => wordOverlap(shrinkHtml(p.html, { keepLinks: false }).content, p.expected).f1);
    const rt = pages.map((p) => wordOverlap(readabilityTurndown(p.html), p.expected).f1);
    const py = python.map((b) =>
      b.outputs ? f3(mean(pages.map((p) => wordOverlap(b.outputs!.get(p.id) ?? '', p.expected).f1))) : 'skipped',
    );
    console.log(
      `| ${split} | ${pages.length} | ${f3(mean(ours))} | ${ours.filter((x) => x < 0.5).length} | ${f3(mean(rt))} | ${py.join(' | ')} |`,
    );
  }
}

/** Share of the sentences summaries picked that are furniture (summary-furniture.ts), per corpus part. */
async function printSummaryFurniture(): Promise<void> {
  const deps = processorDeps({}, { AI_PROVIDER: 'local' });
  const ai = await createAiProvider(deps.config, deps.logger);
  const readability = loadReadabilityPages();
  const parts: { name: string; pages: ArticlePage[]; examples: boolean }[] = [
    { name: 'Zyte sample (tuning)', pages: loadArticleCorpus(), examples: true },
    { name: 'Readability pages, tuning', pages: readability.filter((p) => p.split === 'tuning'), examples: true },
    // The kept-aside part's picks are never printed: it stays unseen while tuning.
    {
      name: 'Readability pages, kept aside',
      pages: readability.filter((p) => p.split === 'kept-aside'),
      examples: false,
    },
  ];
  console.log(
    `\n### summarize (local): furniture picked, on stealth-dom's text of each page (${FURNITURE_RUNS.map((r) => `${r.format} ${r.maxWords} words`).join(', ')})\n\nA picked sentence is furniture when under 5 words or when under 60 % of its words are in the page's expected article text.\n`,
  );
  console.log('| part | summaries | sentences picked | furniture | furniture rate | summaries with a cut sentence |');
  console.log('|---|---|---|---|---|---|');
  const shown: string[] = [];
  for (const { name, pages, examples } of parts) {
    const s = await scoreSummaryFurniture(ai, pages);
    console.log(
      `| ${name} | ${s.summaries} | ${s.picked} | ${s.furniture} | ${f3(s.furniture / Math.max(1, s.picked))} | ${s.cut} |`,
    );
    if (examples && s.examples.length) shown.push(`${name}:\n  ${s.examples.join('\n  ')}`);
  }
  if (shown.length) console.log(`\nfurniture picked:\n${shown.join('\n')}`);
}
