/**
 * Phase W of `npm run bench:utility` (issue 23): every worst-case shape of every text SKU
 * (test/helpers/worst-case-inputs.ts) at 1×, 2× and 4× the schema's maximum input size, each shape in a worker
 * thread of its own (worst-case-worker.ts) stopped past BENCH_WORST_CASE_TIMEOUT_S. Prints the time per size and
 * the ratio per doubling; a ratio above 2.3 is flagged (linear is 2; the target of the issue is ≤ 2.3). One call
 * per size, after a warm-up: the sizes are large enough for the timer.
 *
 * Knobs: BENCH_WORST_CASE (`1` or `all`: every SKU; or SKU ids, comma-separated; `only…` as in `only` or
 * `only:airgap-scrub` runs this phase alone and skips the rest of the bench, which needs Redis),
 * BENCH_WORST_CASE_TIMEOUT_S (120: per shape, all three sizes).
 */
import { Worker } from 'node:worker_threads';
import { MAX_TEXT } from '../../jobs/text-size-limits.js';
import { testConfig } from '../helpers/config.js';
import { AIRGAP_SCRUB, CODE_DENOISE, HTML, SUMMARIZE, X_SENTIMENT } from '../helpers/worst-case-inputs.js';
import type { WorstCaseJob, WorstCaseReport } from './worst-case-worker.js';

/** The largest input each SKU's schema accepts (characters), and its shapes' names. */
function skus(): { sku: WorstCaseJob['sku']; max: number; shapes: string[] }[] {
  const names = (list: readonly { name: string; language?: string }[]) =>
    list.map((s) => (s.language ? `${s.language}: ${s.name}` : s.name));
  return [
    { sku: 'airgap-scrub', max: MAX_TEXT, shapes: names(AIRGAP_SCRUB) },
    { sku: 'code-denoise', max: MAX_TEXT * 5, shapes: names(CODE_DENOISE) },
    { sku: 'rag-shrink', max: MAX_TEXT * 5, shapes: names(HTML) },
    // A fetched page, up to the fetch's body cap.
    { sku: 'stealth-dom', max: testConfig().FETCH_MAX_BODY_BYTES, shapes: names(HTML) },
    { sku: 'summarize', max: MAX_TEXT, shapes: names(SUMMARIZE) },
    { sku: 'x-sentiment', max: 2000, shapes: names(X_SENTIMENT) },
  ];
}

/** The reports of one shape's run, cut short (with `timeout`) when the worker outlives `limitMs`. */
function runShape(job: WorstCaseJob, limitMs: number): Promise<{ reports: WorstCaseReport[]; timeout: boolean }> {
  return new Promise((resolve) => {
    const reports: WorstCaseReport[] = [];
    // The bench runs under tsx, whose loader a worker thread does not inherit: the worker registers it first.
    const entry = new URL('./worst-case-worker.ts', import.meta.url).href;
    const boot = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); })`;
    const worker = new Worker(boot, { eval: true, workerData: job });
    const timer = setTimeout(() => {
      void worker.terminate();
      resolve({ reports, timeout: true });
    }, limitMs);
    worker.on('message', (r: WorstCaseReport) => reports.push(r));
    worker.on('error', (err) => reports.push({ size: job.sizes[reports.length] ?? 0, error: String(err) }));
    worker.on('exit', () => {
      clearTimeout(timer);
      resolve({ reports, timeout: false });
    });
  });
}

const cell = (r: WorstCaseReport | undefined, timeout: boolean): string =>
  !r ? (timeout ? 'timeout' : '-') : 'error' in r ? r.error.slice(0, 30) : r.ms.toFixed(r.ms < 10 ? 1 : 0);
const ratio = (a: WorstCaseReport | undefined, b: WorstCaseReport | undefined): string =>
  a && b && 'ms' in a && 'ms' in b ? `${(b.ms / a.ms).toFixed(2)}${b.ms / a.ms > 2.3 ? ' !' : ''}` : '-';

/** Runs the phase for the SKUs `wanted` names (undefined: all). */
export async function printWorstCaseGrowth(wanted: readonly string[] | undefined, limitS: number): Promise<void> {
  console.log(
    `\nW. Worst-case inputs at 1×, 2×, 4× the schema's maximum (ms per call; ratio per doubling, ! above 2.3)`,
  );
  for (const { sku, max, shapes } of skus()) {
    if (wanted && !wanted.includes(sku)) continue;
    const rows = [];
    for (const [shape, name] of shapes.entries()) {
      const { reports, timeout } = await runShape({ sku, shape, sizes: [max, 2 * max, 4 * max] }, limitS * 1000);
      const [r1, r2, r4] = [0, 1, 2].map((i) => reports[i]);
      rows.push({
        shape: name,
        '1× ms': cell(r1, timeout),
        '2× ms': cell(r2, timeout),
        '4× ms': cell(r4, timeout),
        '2×/1×': ratio(r1, r2),
        '4×/2×': ratio(r2, r4),
      });
    }
    console.log(`${sku} (maximum ${max.toLocaleString('en-US')} characters; a shape stops after ${limitS} s)`);
    console.table(rows);
  }
}
