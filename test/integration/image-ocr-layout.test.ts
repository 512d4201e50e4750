/**
 * The table reconstruction of image-ocr-shrink (jobs/image-ocr-shrink/layout.ts) on
 * word boxes shaped like tesseract's output, for the layouts a rendered test
 * image does not cover: a table whose columns tesseract returned as separate
 * blocks, newspaper-style two-column prose (must stay prose), cells holding
 * a pipe, and speckle noise.
 */
import { describe, expect, it } from 'vitest';
import { layoutToMarkdown, type OcrLine, type OcrWord } from '../../jobs/image-ocr-shrink/layout.js';

/** Words laid out left to right from x with 10 px spaces, 12 px per character, 20 px high at y. */
function words(text: string, x: number, y: number, confidence = 95): OcrWord[] {
  const out: OcrWord[] = [];
  let cursor = x;
  for (const w of text.split(' ')) {
    out.push({ text: w, confidence, x0: cursor, x1: cursor + w.length * 12, y0: y, y1: y + 20 });
    cursor += w.length * 12 + 10;
  }
  return out;
}

function line(paragraph: number, ...parts: OcrWord[][]): OcrLine {
  const ws = parts.flat();
  return {
    paragraph,
    words: ws,
    x0: Math.min(...ws.map((w) => w.x0)),
    x1: Math.max(...ws.map((w) => w.x1)),
    y0: Math.min(...ws.map((w) => w.y0)),
    y1: Math.max(...ws.map((w) => w.y1)),
  };
}

describe('layoutToMarkdown', () => {
  it('rebuilds a table whose columns came back as separate blocks (one line per cell)', () => {
    const rows = [
      ['Port', 'Country', 'TEU'],
      ['Rotterdam', 'Netherlands', '13.4m'],
      ['Antwerp', 'Belgium', '12.5m'],
    ];
    // tesseract's order: the whole first column, then the second, then the third.
    const lines: OcrLine[] = [];
    [40, 300, 560].forEach((x, c) => rows.forEach((r, i) => lines.push(line(c, words(r[c]!, x, 100 + i * 40)))));
    const { markdown, tables } = layoutToMarkdown(lines);
    expect(tables).toBe(1);
    expect(markdown).toBe(
      [
        '| Port | Country | TEU |',
        '| --- | --- | --- |',
        '| Rotterdam | Netherlands | 13.4m |',
        '| Antwerp | Belgium | 12.5m |',
      ].join('\n'),
    );
  });

  it('leaves two-column newspaper prose as text', () => {
    const left = [
      'The harbour opened at dawn and the',
      'first barges moved into the basin',
      'while pilots waited for the tide to',
      'turn near the outer breakwater',
    ];
    const right = [
      'Cranes on the container quay were',
      'already busy with the morning ships',
      'and the trucks queued at the gate',
      'in a line that reached the motorway',
    ];
    const lines = left.map((l, i) => line(0, words(l, 40, 100 + i * 30), words(right[i]!, 520, 100 + i * 30)));
    const { markdown, tables } = layoutToMarkdown(lines);
    expect(tables).toBe(0);
    expect(markdown).not.toContain('|');
    expect(markdown.split('\n')).toHaveLength(4);
  });

  it('escapes pipes inside cells and keeps paragraphs apart', () => {
    const lines = [
      line(0, words('Opening remarks about the report.', 40, 20)),
      line(1, words('Code', 40, 100), words('Meaning', 300, 100)),
      line(1, words('A|B', 40, 140), words('either', 300, 140)),
      line(2, words('Closing remarks.', 40, 260)),
    ];
    const { markdown } = layoutToMarkdown(lines);
    expect(markdown).toBe(
      [
        'Opening remarks about the report.',
        '',
        '| Code | Meaning |',
        '| --- | --- |',
        '| A\\|B | either |',
        '',
        'Closing remarks.',
      ].join('\n'),
    );
  });

  it('drops low-confidence speckles that hold no letter or digit', () => {
    const noisy = [
      ...words('Total due: 42.00', 40, 100),
      { text: '~', confidence: 12, x0: 700, x1: 706, y0: 104, y1: 110 },
    ];
    expect(layoutToMarkdown([line(0, noisy)]).markdown).toBe('Total due: 42.00');
  });

  it('an empty page gives empty text', () => {
    expect(layoutToMarkdown([])).toEqual({ markdown: '', tables: 0 });
  });
});
