/**
 * The second extraction corpus (test/corpus/readability-pages, PROVENANCE.md there): Mozilla Readability's test
 * pages, each with the article text Readability's own test expects, and a fixed split: `tuning` (rules were tuned
 * on these and on the Zyte sample) and `kept-aside` (never looked at while tuning; reported to show how the rules
 * generalise). Pages come as extraction-quality.ts's ArticlePage, scored the same way (bag-of-words F1).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import type { ArticlePage } from './extraction-quality.js';

export const READABILITY_PAGES_DIR = fileURLToPath(new URL('../corpus/readability-pages/', import.meta.url));

export type Split = 'tuning' | 'kept-aside';

export interface SplitPage extends ArticlePage {
  split: Split;
  lang: string | null;
}

export function loadReadabilityPages(split?: Split): SplitPage[] {
  const truth = JSON.parse(
    gunzipSync(readFileSync(join(READABILITY_PAGES_DIR, 'expected.json.gz'))).toString('utf8'),
  ) as Record<string, { title: string; lang: string | null; split: Split; text: string }>;
  const ids = readdirSync(join(READABILITY_PAGES_DIR, 'html'))
    .filter((n) => n.endsWith('.html.gz'))
    .map((n) => n.slice(0, -'.html.gz'.length))
    .sort();
  return ids
    .map((id) => {
      const t = truth[id];
      if (!t) throw new Error(`no expected text for ${id}`);
      return {
        id,
        url: id,
        html: gunzipSync(readFileSync(join(READABILITY_PAGES_DIR, 'html', `${id}.html.gz`))).toString('utf8'),
        expected: t.text,
        split: t.split,
        lang: t.lang,
      };
    })
    .filter((p) => !split || p.split === split);
}
