/**
 * The structured-text pass of airgap-scrub: what a document's layout says about its values, before the pattern
 * detectors read it.
 *
 * `readStructure(text)` returns:
 *  - `view`: a copy of the text of the SAME LENGTH (so every offset found on it holds for the text) in which
 *     - e-mail quote markers at line starts (`> `, `>> `, `> > `) are blanks: a quoted reply reads like the
 *       original message (an address line, a town line and a postcode on three `> ` lines are one address);
 *     - the separators of a CSV / semicolon / pipe export (outside quoted cells) are tabs: a cell reads as a
 *       field of its own (`CA,94642,700.77` reads `CA\t94642\t700.77`: a state then a ZIP; a card number after
 *       a comma is not taken for the tail of a thousands-separated number);
 *  - `fields`: the values that a key names, with their key: JSON members (`"zip": "94642"`, `"zip": 94642`),
 *    `key: value` and `key = value` lines, `k=v&k2=v2` query strings and `k=v k2=v2` log fields, dot-leader
 *    forms (`Applicant ...... value`), and the cells of a CSV/TSV export under its header row. A header-less
 *    export gets a key from its columns' consistency: the column right after a column of US state codes, when
 *    its cells are five-digit numbers, is a `zip` column.
 * field-evidence.ts turns the fields into evidence (a bare nine digits under `ssn` is an SSN, a number under
 * `imei` is not a phone).
 *
 * Hand-written: the CSV readers on npm (csv-parse, papaparse) parse a file known to be CSV and report records,
 * not the offsets of each cell in a larger text that may hold a CSV block among prose; JSON.parse needs the
 * whole text to be JSON. The scan here is one pass over the lines (each line is read a fixed number of times)
 * and the JSON member pattern has bounded repetitions: linear in the text.
 */
import { US_STATE_CODES } from './postal-codes.js';

export interface Field {
  /** The key as written (`zipCode`, `Postal code`, `card_number`). */
  key: string;
  /** The value's offsets in the text, end exclusive, without blanks or the quotes around it. */
  start: number;
  end: number;
}

export interface Structure {
  view: string;
  fields: Field[];
}

/** Quote markers at a line start: blanks, one or more `>` (blanks between them), then one blank. */
const QUOTE_MARKERS_RE = /^[ \t]*>(?:[ \t]*>)*[ \t]?/gm;

/** A JSON member with a string or number value; `d`: the value's offsets. Keys and values are bounded. */
const JSON_MEMBER_RE = /"([A-Za-z_$][\w $.-]{0,60})"[ \t]*:[ \t]*(?:"((?:[^"\\\n]|\\.){0,400})"|(-?\d[\d.]{0,40}))/dg;

/** `key=value` tokens of a log or query line (value up to a blank, `&`, `;` or `,`, or a quoted string). */
const EQ_TOKEN_RE = /(?<![\w.-])([A-Za-z_][\w.-]{0,40})=(?:"([^"\n]{0,400})"|([^\s"&;,]{1,400}))/dg;

/** What a key looks like: a few words of letters, digits and light punctuation, starting with a letter. */
const KEY_RE = /^[A-Za-z][A-Za-z0-9 _.#()/'-]{0,40}$/;
/** A CSV header cell (without the blanks around it): a key, possibly quoted. */
const HEADER_CELL_RE = /^"?[A-Za-z][A-Za-z0-9 _.#()/'-]{0,40}"?$/;
/** The dots of a dot leader (`Applicant ........ Jane`) and the blanks after them. */
const LEADER_DOTS_RE = /^\.{2,}[ \t]*/;

const MAX_KEY_WORDS = 5;
/** The longest cell of the first row of an export block (characters). */
const MAX_CELL = 80;
const CELL_SEPARATORS = ['\t', ',', ';', '|'] as const;
/** Lines longer than this are not read as fields or cells (a minified blob is not a form). */
const MAX_LINE = 20_000;

interface Line {
  start: number;
  end: number;
}

interface Cell {
  start: number;
  end: number;
}

/** A line's cells for `sep`, quote-aware (a cell that starts with `"` runs to its closing quote, `""` escapes one). */
function cellsOf(text: string, line: Line, sep: string): Cell[] {
  const cells: Cell[] = [];
  let at = line.start;
  while (at <= line.end) {
    let i = at;
    while (i < line.end && (text[i] === ' ' || text[i] === '\t') && text[i] !== sep) i++;
    if (text[i] === '"') {
      i++;
      while (i < line.end) {
        if (text[i] === '"') {
          if (text[i + 1] === '"') i += 2;
          else break;
        } else i++;
      }
      i++;
    }
    const next = text.indexOf(sep, Math.min(i, line.end));
    const end = next < 0 || next > line.end ? line.end : next;
    cells.push({ start: at, end });
    at = end + 1;
  }
  return cells;
}

/** The value of a cell or field without blanks and the quotes around it. */
function trimmed(text: string, start: number, end: number): Cell {
  while (start < end && /\s/.test(text[start]!)) start++;
  while (end > start && /\s/.test(text[end - 1]!)) end--;
  if (end - start >= 2 && text[start] === '"' && text[end - 1] === '"') {
    start++;
    end--;
  }
  return { start, end };
}

const isKey = (key: string) => KEY_RE.test(key) && key.trim().split(/\s+/).length <= MAX_KEY_WORDS;

/** The separator a line is written with, and its cells (3 or more), if it reads as a row of an export. */
function rowOf(text: string, line: Line): { sep: string; cells: Cell[] } | undefined {
  let best: { sep: string; cells: Cell[] } | undefined;
  // Searched within the line only: indexOf from the line's start would scan the rest of the text on every line.
  const own = text.slice(line.start, line.end);
  for (const sep of CELL_SEPARATORS) {
    if (!own.includes(sep)) continue;
    const cells = cellsOf(text, line, sep);
    // A row's cells are short: a line of prose or a log line with a few commas or semicolons is not a row.
    if (cells.some((c) => c.end - c.start > MAX_CELL)) continue;
    if (cells.length >= 3 && (!best || cells.length > best.cells.length)) best = { sep, cells };
  }
  return best;
}

/** The share of non-empty cells of column `c` that pass `test`. */
function columnShare(text: string, rows: Cell[][], c: number, test: (v: string) => boolean): number {
  let n = 0;
  let ok = 0;
  for (const cells of rows) {
    const cell = cells[c];
    if (!cell) continue;
    const v = trimmed(text, cell.start, cell.end);
    if (v.end === v.start) continue;
    n++;
    if (test(text.slice(v.start, v.end))) ok++;
  }
  return n ? ok / n : 0;
}

export function readStructure(text: string): Structure {
  const view = text.includes('>') ? text.replace(QUOTE_MARKERS_RE, (m) => ' '.repeat(m.length)) : text;
  const chars = view.includes(',') || view.includes(';') || view.includes('|') ? view.split('') : undefined;
  const fields: Field[] = [];

  const lines: Line[] = [];
  for (let start = 0; start <= view.length;) {
    const nl = view.indexOf('\n', start);
    const end = nl < 0 ? view.length : nl;
    lines.push({ start, end });
    start = end + 1;
  }

  // CSV / TSV blocks: consecutive lines with the same separator and the same number of cells (3 or more).
  const inBlock = new Uint8Array(lines.length);
  for (let i = 0; i < lines.length;) {
    const first = lines[i]!.end - lines[i]!.start <= MAX_LINE ? rowOf(view, lines[i]!) : undefined;
    if (!first) {
      i++;
      continue;
    }
    const rows = [first.cells];
    let j = i + 1;
    for (; j < lines.length && lines[j]!.end - lines[j]!.start <= MAX_LINE; j++) {
      const cells = cellsOf(view, lines[j]!, first.sep);
      if (cells.length !== first.cells.length) break;
      rows.push(cells);
    }
    // A header row: every cell a key (the empty cells outside a Markdown table's edge pipes aside).
    const inner = first.cells.filter(
      (c, n) => !((n === 0 || n === first.cells.length - 1) && !view.slice(c.start, c.end).trim()),
    );
    const header = inner.length >= 2 && inner.every((c) => HEADER_CELL_RE.test(view.slice(c.start, c.end).trim()));
    if (rows.length < (header ? 2 : 3)) {
      i++;
      continue;
    }
    for (let k = i; k < j; k++) inBlock[k] = 1;
    if (chars && first.sep !== '\t')
      for (const cells of rows) for (const c of cells.slice(1)) chars[c.start - 1] = '\t';
    const body = header ? rows.slice(1) : rows;
    const keys = header
      ? first.cells.map((c) => view.slice(c.start, c.end).trim().replace(/^"|"$/g, ''))
      : first.cells.map(() => '');
    if (!header) {
      // A header-less export: a column of five-digit numbers right after a column of US state codes is a zip column.
      for (let c = 0; c + 1 < keys.length; c++) {
        if (
          columnShare(view, body, c, (v) => US_STATE_CODES.has(v)) >= 0.8 &&
          columnShare(view, body, c + 1, (v) => /^\d{5}(?:-\d{4})?$/.test(v)) >= 0.8
        )
          keys[c + 1] = 'zip';
      }
    }
    for (const cells of body)
      cells.forEach((cell, c) => {
        if (!keys[c]) return;
        const v = trimmed(view, cell.start, cell.end);
        if (v.end > v.start) fields.push({ key: keys[c]!, ...v });
      });
    i = j;
  }

  // Form lines: `key: value`, `key = value`, query strings and log fields, dot leaders.
  lines.forEach((line, k) => {
    if (inBlock[k] || line.end - line.start > MAX_LINE || line.end === line.start) return;
    const raw = view.slice(line.start, line.end);
    const eqs = raw.split('=').length - 1;
    const single = eqs === 1 && isKey(raw.slice(0, raw.indexOf('=')).trim()) && !/[&;?]/.test(raw);
    if (eqs >= 1 && !single) {
      // Query strings split on `&`/`;` (a value may hold blanks there); otherwise `k=v` tokens.
      const parts = raw.split(/[&;]/);
      const keyOf = (part: string) => part.slice(0, Math.max(0, part.indexOf('='))).trim();
      if (parts.length > 1 && parts.every((part) => isKey(keyOf(part)))) {
        let at = line.start;
        for (const part of parts) {
          const eq = part.indexOf('=');
          const key = part.slice(0, eq).trim();
          if (eq > 0 && isKey(key)) fields.push({ key, ...trimmed(view, at + eq + 1, at + part.length) });
          at += part.length + 1;
        }
        return;
      }
      for (const m of raw.matchAll(EQ_TOKEN_RE)) {
        const [s, e] = m.indices![2] ?? m.indices![3]!;
        fields.push({ key: m[1]!, start: line.start + s, end: line.start + e });
      }
      return;
    }
    const lead = raw.length - raw.trimStart().length;
    const body = raw.slice(lead).replace(/^[-*•][ \t]+/, (m) => ' '.repeat(m.length));
    const leader = body.indexOf('..');
    if (leader > 0 && isKey(body.slice(0, leader).trim())) {
      const dots = LEADER_DOTS_RE.exec(body.slice(leader))!;
      const v = trimmed(view, line.start + lead + leader + dots[0].length, line.end);
      if (v.end > v.start) fields.push({ key: body.slice(0, leader).trim(), ...v });
      return;
    }
    const colon = body.search(/[:=]/);
    if (colon <= 0) return;
    const key = body.slice(0, colon).trim();
    // `12:30`, `http://`: a colon must be followed by a blank or end the line.
    if (body[colon] === ':' && colon + 1 < body.length && !/[ \t]/.test(body[colon + 1]!)) return;
    if (!isKey(key)) return;
    const v = trimmed(view, line.start + lead + colon + 1, line.end);
    if (v.end > v.start) fields.push({ key, ...v });
  });

  // JSON members anywhere (pretty-printed, compact, or one record per line).
  if (view.includes('"')) {
    for (const m of view.matchAll(JSON_MEMBER_RE)) {
      const [s, e] = m.indices![2] ?? m.indices![3]!;
      fields.push({ key: m[1]!, start: s, end: e });
    }
  }

  return { view: chars ? chars.join('') : view, fields };
}
