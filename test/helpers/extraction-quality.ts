/**
 * Main-content extraction quality on the public article-extraction corpus
 * (test/corpus/article-extraction, PROVENANCE.md there): each page's HTML
 * and its expected article text, scored by bag-of-words overlap, the
 * measure of that benchmark's own evaluation: the words of the extracted
 * text and of the expected text as multisets (lower-cased runs of letters
 * and digits, so Markdown markup counts for nothing), precision = shared /
 * extracted, recall = shared / expected, F1 their harmonic mean; a page
 * with nothing extracted scores 0.
 *
 * Baselines measured in the same run: @mozilla/readability on a linkedom
 * document + turndown of its article (in process), and, when Python has
 * them, trafilatura and readability-lxml (PyPI, test-time only; a missing
 * package is reported, never a failure).
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import TurndownService from 'turndown';

export const ARTICLE_CORPUS_DIR = fileURLToPath(new URL('../corpus/article-extraction/', import.meta.url));

export interface ArticlePage {
  id: string;
  url: string;
  html: string;
  expected: string;
}

export function loadArticleCorpus(limit = Infinity): ArticlePage[] {
  const truth = JSON.parse(readFileSync(join(ARTICLE_CORPUS_DIR, 'ground-truth.json'), 'utf8')) as Record<
    string,
    { articleBody: string; url?: string }
  >;
  const ids = readdirSync(join(ARTICLE_CORPUS_DIR, 'html'))
    .filter((n) => n.endsWith('.html.gz'))
    .map((n) => n.slice(0, -'.html.gz'.length))
    .sort()
    .slice(0, limit);
  return ids.map((id) => {
    const t = truth[id];
    if (!t) throw new Error(`no ground truth for ${id}`);
    return {
      id,
      url: t.url ?? '',
      html: gunzipSync(readFileSync(join(ARTICLE_CORPUS_DIR, 'html', `${id}.html.gz`))).toString('utf8'),
      expected: t.articleBody,
    };
  });
}

const WORD = /[\p{L}\p{N}]+/gu;

export function bagOfWords(text: string): Map<string, number> {
  const bag = new Map<string, number>();
  for (const m of text.toLowerCase().matchAll(WORD)) bag.set(m[0], (bag.get(m[0]) ?? 0) + 1);
  return bag;
}

export interface Score {
  precision: number;
  recall: number;
  f1: number;
}

export function wordOverlap(extracted: string, expected: string): Score {
  const pred = bagOfWords(extracted);
  const truth = bagOfWords(expected);
  let shared = 0;
  let predN = 0;
  let truthN = 0;
  for (const n of pred.values()) predN += n;
  for (const [w, n] of truth) {
    truthN += n;
    shared += Math.min(n, pred.get(w) ?? 0);
  }
  if (!predN || !truthN || !shared) return { precision: predN ? 0 : truthN ? 0 : 1, recall: truthN ? 0 : 1, f1: 0 };
  const precision = shared / predN;
  const recall = shared / truthN;
  return { precision, recall, f1: (2 * precision * recall) / (precision + recall) };
}

/** @mozilla/readability (on linkedom, as the project parses) + turndown: the in-process baseline. */
export function readabilityTurndown(
  html: string,
  turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced' }),
): string {
  const { document } = parseHTML(html);
  const article = new Readability(document as unknown as ConstructorParameters<typeof Readability>[0]).parse();
  return article?.content ? turndown.turndown(article.content) : '';
}

export interface PythonBaseline {
  name: string;
  /** Extracted text per page id; undefined when the package is missing (with `note`). */
  outputs?: Map<string, string>;
  note?: string;
}

const PY_EXTRACT = `
import json, sys
which, src, dst = sys.argv[1], sys.argv[2], sys.argv[3]
pages = json.load(open(src))
out = {}
if which == 'trafilatura':
    import trafilatura
    for k, html in pages.items():
        out[k] = trafilatura.extract(html, include_comments=False, include_tables=True) or ''
else:
    from readability import Document
    import lxml.html
    for k, html in pages.items():
        try:
            summary = Document(html).summary(html_partial=True)
            out[k] = lxml.html.fromstring(summary).text_content() if summary.strip() else ''
        except Exception:
            out[k] = ''
json.dump(out, open(dst, 'w'))
`;

/** trafilatura and readability-lxml through python3, when installed (`pip install trafilatura readability-lxml`). */
export function pythonBaselines(pages: readonly ArticlePage[]): PythonBaseline[] {
  const dir = mkdtempSync(join(tmpdir(), 'extraction-baselines-'));
  try {
    const src = join(dir, 'pages.json');
    writeFileSync(src, JSON.stringify(Object.fromEntries(pages.map((p) => [p.id, p.html]))));
    writeFileSync(join(dir, 'extract.py'), PY_EXTRACT);
    return (['trafilatura', 'readability-lxml'] as const).map((name) => {
      const dst = join(dir, `${name}.json`);
      const r = spawnSync(
        'python3',
        [join(dir, 'extract.py'), name === 'trafilatura' ? 'trafilatura' : 'readability', src, dst],
        { encoding: 'utf8', timeout: 600_000 },
      );
      if (r.error || r.status !== 0) {
        const why = r.error ? String(r.error.message) : (r.stderr.trim().split('\n').pop() ?? `exit ${r.status}`);
        return {
          name,
          note: `skipped: ${why} (pip install ${name === 'trafilatura' ? 'trafilatura' : 'readability-lxml'})`,
        };
      }
      const outputs = new Map(Object.entries(JSON.parse(readFileSync(dst, 'utf8')) as Record<string, string>));
      return { name, outputs };
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
