/**
 * Builds this corpus from a checkout of mozilla/readability (PROVENANCE.md):
 *   npx tsx test/corpus/readability-pages/build.ts <path to the checkout's test/test-pages>
 * Keeps the pages whose gzipped source is at most 60 kB and whose expected article has at least 50 words, writes
 * html/<id>.html.gz (source.html, gzip -9) and expected.json.gz (the text of expected.html, block elements on their own
 * lines, the title and language from expected-metadata.json, and the split). The split is fixed by the id: its
 * SHA-1's first byte below 86 (a third) is kept aside, the rest is for tuning.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { parseHTML } from 'linkedom';

const src = process.argv[2];
if (!src) throw new Error('usage: build.ts <test/test-pages directory>');
const out = new URL('./', import.meta.url).pathname;
mkdirSync(join(out, 'html'), { recursive: true });

interface Node {
  nodeType: number;
  nodeName: string;
  textContent: string | null;
  childNodes: ArrayLike<Node>;
}
const BLOCK = /^(?:P|DIV|H[1-6]|LI|UL|OL|TR|TD|TH|BLOCKQUOTE|PRE|SECTION|ARTICLE|FIGCAPTION|BR|DT|DD|TABLE)$/;
function text(node: Node, out: string[]): void {
  if (node.nodeType === 3) out.push(node.textContent ?? '');
  if (node.nodeType !== 1 && node.nodeType !== 9) return;
  const block = BLOCK.test(node.nodeName);
  if (block) out.push('\n');
  for (const c of Array.from(node.childNodes)) text(c, out);
  if (block) out.push('\n');
}

const expected: Record<string, { title: string; lang: string | null; split: 'tuning' | 'kept-aside'; text: string }> = {};
for (const id of readdirSync(src).sort()) {
  let html: string;
  let want: string;
  let meta: { title?: string; lang?: string | null };
  try {
    html = readFileSync(join(src, id, 'source.html'), 'utf8');
    want = readFileSync(join(src, id, 'expected.html'), 'utf8');
    meta = JSON.parse(readFileSync(join(src, id, 'expected-metadata.json'), 'utf8'));
  } catch {
    continue;
  }
  const gz = gzipSync(html, { level: 9 });
  const parts: string[] = [];
  text(parseHTML(`<!doctype html><html><body>${want}</body></html>`).document.body as unknown as Node, parts);
  const body = parts
    .join('')
    .split('\n')
    .map((l) => l.replace(/\s+/g, ' ').trim())
    .filter(Boolean)
    .join('\n');
  if (gz.length > 60_000 || (body.match(/[\p{L}\p{N}]+/gu) ?? []).length < 50) continue;
  writeFileSync(join(out, 'html', `${id}.html.gz`), gz);
  const split = createHash('sha1').update(id).digest()[0]! < 86 ? 'kept-aside' : 'tuning';
  expected[id] = { title: meta.title ?? '', lang: meta.lang ?? null, split, text: body };
}
writeFileSync(join(out, 'expected.json.gz'), gzipSync(`${JSON.stringify(expected, null, 1)}\n`, { level: 9 }));
const n = Object.values(expected);
console.log(`${n.length} pages: ${n.filter((e) => e.split === 'tuning').length} tuning, ${n.filter((e) => e.split === 'kept-aside').length} kept aside`);
