/**
 * From OCR word boxes to Markdown: prose as lines and paragraphs, tabular
 * regions as Markdown tables. tesseract gives words with bounding boxes but
 * no table structure (and often splits a table's columns into separate
 * blocks), so the layout is rebuilt here from geometry; no package does this
 * on tesseract output.
 *
 *  1. Rows: tesseract's lines, merged when they sit on the same baseline band
 *     (vertical overlap of at least half the smaller height, no horizontal
 *     overlap): a table row that tesseract cut into one line per column
 *     becomes one row again.
 *  2. Segments: inside a row, words separated by a gap wider than
 *     max(1.2 x the median word height, 2.5 x the median character width)
 *     start a new segment (a cell candidate).
 *  3. Tables: a run of at least two consecutive rows with two or more
 *     segments each, close together vertically, whose segments fall into
 *     common columns: segment x-ranges of the run, sorted and merged where
 *     they overlap, give the columns; each segment must land in a column of
 *     its own. Runs that look like multi-column prose (long cells that fill
 *     their column) are left as text.
 *  4. Output: prose rows joined by newlines, a blank line between
 *     tesseract paragraphs; a table as `| a | b |` rows under a `| --- |`
 *     rule, its first row as the header.
 */

export interface Box {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

export interface OcrWord extends Box {
  text: string;
  confidence: number;
}

export interface OcrLine extends Box {
  words: OcrWord[];
  /** Paragraph index in reading order (tesseract's block/paragraph structure). */
  paragraph: number;
}

interface Row extends Box {
  words: OcrWord[];
  paragraph: number;
}

interface Segment extends Box {
  text: string;
  words: number;
}

const median = (values: number[]): number => {
  if (!values.length) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

const height = (b: Box) => b.y1 - b.y0;

/** Keeps a word unless it is low-confidence noise without a letter or digit (speckles read as punctuation). */
const isNoise = (w: OcrWord) => !w.text.trim() || (w.confidence < 30 && !/[\p{L}\p{N}]/u.test(w.text));

function buildRows(lines: OcrLine[]): Row[] {
  const rows: Row[] = [];
  const sorted = lines
    .map((l) => ({ ...l, words: l.words.filter((w) => !isNoise(w)) }))
    .filter((l) => l.words.length)
    .sort((a, b) => (a.y0 + a.y1) / 2 - (b.y0 + b.y1) / 2);
  for (const line of sorted) {
    const row = rows.find((r) => {
      const overlap = Math.min(r.y1, line.y1) - Math.max(r.y0, line.y0);
      const horizontal = Math.min(r.x1, line.x1) - Math.max(r.x0, line.x0);
      return overlap >= 0.5 * Math.min(height(r), height(line)) && horizontal <= 0;
    });
    if (row) {
      row.words.push(...line.words);
      row.x0 = Math.min(row.x0, line.x0);
      row.x1 = Math.max(row.x1, line.x1);
      row.y0 = Math.min(row.y0, line.y0);
      row.y1 = Math.max(row.y1, line.y1);
      row.paragraph = Math.min(row.paragraph, line.paragraph);
    } else {
      rows.push({
        x0: line.x0,
        y0: line.y0,
        x1: line.x1,
        y1: line.y1,
        words: [...line.words],
        paragraph: line.paragraph,
      });
    }
  }
  for (const row of rows) row.words.sort((a, b) => a.x0 - b.x0);
  return rows.sort((a, b) => a.y0 - b.y0);
}

function segmentsOf(row: Row, gapThreshold: number): Segment[] {
  const segments: Segment[] = [];
  let current: Segment | undefined;
  for (const w of row.words) {
    if (current && w.x0 - current.x1 <= gapThreshold) {
      current.text += ` ${w.text}`;
      current.x1 = Math.max(current.x1, w.x1);
      current.y0 = Math.min(current.y0, w.y0);
      current.y1 = Math.max(current.y1, w.y1);
      current.words += 1;
    } else {
      current = { text: w.text, x0: w.x0, x1: w.x1, y0: w.y0, y1: w.y1, words: 1 };
      segments.push(current);
    }
  }
  return segments;
}

/** Column intervals of a run of rows: segment x-ranges merged where they overlap. */
function columnsOf(rows: Segment[][], tolerance: number): Box[] {
  const spans = rows.flat().sort((a, b) => a.x0 - b.x0);
  const columns: Box[] = [];
  for (const s of spans) {
    const last = columns[columns.length - 1];
    if (last && s.x0 <= last.x1 + tolerance) last.x1 = Math.max(last.x1, s.x1);
    else columns.push({ x0: s.x0, x1: s.x1, y0: 0, y1: 0 });
  }
  return columns;
}

/** Places each segment of each row in its column; null when two segments of a row share one (not a grid). */
function grid(rows: Segment[][], columns: Box[], tolerance: number): string[][] | null {
  const table: string[][] = [];
  for (const segments of rows) {
    const cells = columns.map(() => '');
    for (const s of segments) {
      const index = columns.findIndex((c) => s.x0 >= c.x0 - tolerance && s.x1 <= c.x1 + tolerance);
      if (index < 0 || cells[index]) return null;
      cells[index] = s.text;
    }
    table.push(cells);
  }
  return table;
}

/** Two or more columns of long text filling their column width: newspaper-style prose, not a table. */
function looksLikeProse(rows: Segment[][], columns: Box[]): boolean {
  const segments = rows.flat();
  const wordsPerCell = median(segments.map((s) => s.words));
  const fill = median(
    segments.map((s) => {
      const column = columns.find((c) => s.x0 >= c.x0 - 1 && s.x1 <= c.x1 + 1);
      return column ? (s.x1 - s.x0) / Math.max(1, column.x1 - column.x0) : 0;
    }),
  );
  return wordsPerCell > 4 && fill > 0.8;
}

const escapeCell = (text: string) => text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|');

function markdownTable(table: string[][]): string {
  const [header, ...body] = table;
  const line = (cells: string[]) => `| ${cells.map(escapeCell).join(' | ')} |`;
  return [line(header!), `| ${header!.map(() => '---').join(' | ')} |`, ...body.map(line)].join('\n');
}

export interface LayoutResult {
  markdown: string;
  tables: number;
}

export function layoutToMarkdown(lines: OcrLine[]): LayoutResult {
  const rows = buildRows(lines);
  if (!rows.length) return { markdown: '', tables: 0 };
  const words = rows.flatMap((r) => r.words);
  const wordHeight = median(words.map(height)) || 1;
  // A word space is about one character wide (less in most fonts); a column gap is several. The median
  // gap between words is no guide: in a table of one-word cells most gaps ARE column gaps.
  const charWidth = median(words.map((w) => (w.x1 - w.x0) / Math.max(1, [...w.text].length)));
  const gapThreshold = Math.max(1.2 * wordHeight, 2.5 * charWidth);
  const tolerance = 0.5 * wordHeight;
  const segmented = rows.map((r) => segmentsOf(r, gapThreshold));

  const blocks: string[] = [];
  let prose: string[] = [];
  let tables = 0;
  const flushProse = () => {
    if (prose.length) blocks.push(prose.join('\n'));
    prose = [];
  };

  let i = 0;
  while (i < rows.length) {
    // The longest run of close multi-segment rows from i.
    let j = i;
    while (
      j < rows.length &&
      segmented[j]!.length >= 2 &&
      (j === i || rows[j]!.y0 - rows[j - 1]!.y1 <= 3 * wordHeight)
    ) {
      j++;
    }
    if (j - i >= 2) {
      const run = segmented.slice(i, j);
      const columns = columnsOf(run, tolerance);
      const table = columns.length >= 2 && !looksLikeProse(run, columns) ? grid(run, columns, tolerance) : null;
      if (table) {
        flushProse();
        blocks.push(markdownTable(table));
        tables++;
        i = j;
        continue;
      }
    }
    const row = rows[i]!;
    if (prose.length && row.paragraph !== rows[i - 1]!.paragraph) flushProse();
    prose.push(segmented[i]!.map((s) => s.text).join(' '));
    i++;
  }
  flushProse();
  return { markdown: blocks.join('\n\n'), tables };
}
