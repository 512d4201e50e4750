/**
 * The markup stealth-dom extracts from, bounded (issue 23: maximum-size honest inputs meet the latency target).
 *
 * An answer holds at most 10,000 characters (the spec), but a fetched page may be 2 MiB (FETCH_MAX_BODY_BYTES),
 * and parsing, Readability's scoring and turndown all cost time per byte of markup: 2 MiB of article pages took
 * 0.9 s against the 200 ms target. Most of a heavy page is not content: scripts, styles and comments, which
 * Readability removes first anyway. So before the extraction they are taken out (JSON-LD scripts excepted:
 * Readability reads metadata from them) (one pass of htmlparser2's
 * tokenizer, linear: jobs/html-tag-scan.ts), and what remains is cut at MAX_EXTRACTED_MARKUP characters,
 * at a tag's start so no tag is split. 150,000 characters of markup hold far more than 10,000 characters of
 * text: the median article page of the extraction corpora is 40 KB with its scripts.
 */
import { scanHtmlTags } from '../html-tag-scan.js';

/** Characters of markup (scripts, styles and comments out) the extraction reads at most. */
export const MAX_EXTRACTED_MARKUP = 150_000;

/** Elements whose content the tokenizer reads as raw text, dropped with it. */
const DROPPED = new Set(['script', 'style']);
const JSON_LD = /\btype\s*=\s*["']?application\/ld\+json/i;

export interface BudgetedMarkup {
  html: string;
  /** Characters of scripts, styles and comments taken out. */
  dropped: number;
  /** Whether the markup was cut at the budget. */
  cut: boolean;
}

/** `html` without scripts, styles and comments, cut at `max` characters at a tag's start. */
export function budgetMarkup(html: string, max: number = MAX_EXTRACTED_MARKUP): BudgetedMarkup {
  /** Source ranges [start, end) to take out, in increasing order. */
  const cuts: number[] = [];
  let rawStart = -1;
  let rawName = '';
  scanHtmlTags(
    html,
    {
      onopentagname: (start, end) => {
        const name = html.slice(start, end).toLowerCase();
        // JSON-LD stays: Readability reads the title, byline and excerpt from it. (A bounded look at the tag.)
        if (name === 'script' && JSON_LD.test(html.slice(end, end + 512).split('>', 1)[0]!)) return;
        if (rawStart < 0 && DROPPED.has(name)) [rawStart, rawName] = [start - 1, name];
      },
      onclosetag: (start, end) => {
        if (rawStart < 0 || html.slice(start, end).toLowerCase() !== rawName) return;
        const gt = html.indexOf('>', end);
        cuts.push(rawStart, gt === -1 ? html.length : gt + 1);
        rawStart = -1;
      },
      oncomment: (start, endIndex) => {
        // `<!--x-->`, `<!x>` or `<?x>`: the token opens at the `<` just before its content.
        const open = html.lastIndexOf('<', start - 1);
        if (open >= 0 && start - open <= 4) cuts.push(open, endIndex + 1);
      },
    },
    { decodeEntities: false },
  );
  if (rawStart >= 0) cuts.push(rawStart, html.length); // an unclosed script runs to the end, as a browser reads it
  const parts: string[] = [];
  let at = 0;
  let dropped = 0;
  for (let i = 0; i < cuts.length; i += 2) {
    const [start, end] = [Math.max(cuts[i]!, at), cuts[i + 1]!];
    if (end <= start) continue;
    parts.push(html.slice(at, start));
    dropped += end - start;
    at = end;
  }
  parts.push(html.slice(at));
  const kept = dropped ? parts.join('') : html;
  if (kept.length <= max) return { html: kept, dropped, cut: false };
  const tagStart = kept.lastIndexOf('<', max);
  return { html: kept.slice(0, tagStart > max / 2 ? tagStart : max), dropped, cut: true };
}
