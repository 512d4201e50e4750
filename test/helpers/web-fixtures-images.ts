/**
 * Images rendered in the test, offline: pureimage draws text with the DejaVu
 * TrueType fonts Debian ships (/usr/share/fonts/truetype/dejavu) and encodes
 * PNG or JPEG. The OCR tests serve these from the loopback site.
 */
import { PassThrough } from 'node:stream';
import * as PImage from 'pureimage';

const FONT_FILE = '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf';
const FONT = 'DejaVu Sans';
let fontLoaded: Promise<void> | undefined;

function loadFont(): Promise<void> {
  fontLoaded ??= PImage.registerFont(FONT_FILE, FONT).load();
  return fontLoaded;
}

type Bitmap = ReturnType<typeof PImage.make>;

async function encode(image: Bitmap, kind: 'png' | 'jpeg'): Promise<Buffer> {
  const chunks: Buffer[] = [];
  const sink = new PassThrough();
  sink.on('data', (d: Buffer) => chunks.push(d));
  if (kind === 'png') await PImage.encodePNGToStream(image, sink);
  else await PImage.encodeJPEGToStream(image, sink, 95);
  return Buffer.concat(chunks);
}

export interface TableDocument {
  title: string;
  intro: string;
  header: string[];
  rows: string[][];
  footer: string;
  /** x of each column's left edge (or right edge when right-aligned). */
  columns?: number[];
  align?: ('left' | 'right')[];
}

/** A timetable: right-aligned numbers, an empty cell, three columns. */
export const TIMETABLE: TableDocument = {
  title: 'Ferry departures',
  intro: 'Hook of Holland to Harwich, winter schedule.',
  header: ['Vessel', 'Departs', 'Berths'],
  rows: [
    ['Stena Britannica', '14:15', '212'],
    ['Stena Hollandica', '22:00', ''],
    ['Caroline Russ', '09:30', '48'],
  ],
  footer: 'Times are local and subject to tides.',
  columns: [40, 620, 900],
  align: ['left', 'right', 'right'],
};

/** An invoice-like page: a title, a sentence, a ruled table with left-aligned columns, a closing sentence. */
export const INVOICE: TableDocument = {
  title: 'Quarterly Invoice Summary',
  intro: 'Shipped from the Rotterdam warehouse on 12 March.',
  header: ['Item', 'Quantity', 'Unit price', 'Total'],
  rows: [
    ['Coffee beans', '12', '3.50', '42.00'],
    ['Green tea', '4', '2.75', '11.00'],
    ['Oat milk', '30', '1.20', '36.00'],
    ['Sugar cubes', '7', '0.90', '6.30'],
  ],
  footer: 'Payment is due within thirty days.',
};

export async function renderTableDocument(
  doc: TableDocument = INVOICE,
  kind: 'png' | 'jpeg' = 'png',
): Promise<{ image: Buffer; width: number; height: number }> {
  await loadFont();
  const width = 1000;
  const rowHeight = 46;
  const tableTop = 150;
  const height = tableTop + rowHeight * (doc.rows.length + 1) + 120;
  const image = PImage.make(width, height);
  const ctx = image.getContext('2d');
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, width, height);
  ctx.fillStyle = '#000000';
  ctx.font = `32px '${FONT}'`;
  ctx.fillText(doc.title, 40, 60);
  ctx.font = `22px '${FONT}'`;
  ctx.fillText(doc.intro, 40, 105);
  const columns = doc.columns ?? [40, 360, 560, 780];
  const rows = [doc.header, ...doc.rows];
  rows.forEach((cells, r) => {
    const baseline = tableTop + 30 + r * rowHeight;
    cells.forEach((cell, c) => {
      const x = doc.align?.[c] === 'right' ? columns[c]! - ctx.measureText(cell).width : columns[c]!;
      ctx.fillText(cell, x, baseline);
    });
  });
  // Rules under the header and at the bottom, as printed tables have.
  ctx.fillStyle = '#444444';
  ctx.fillRect(40, tableTop + rowHeight - 6, width - 120, 2);
  ctx.fillRect(40, tableTop + rowHeight * rows.length + 4, width - 120, 2);
  ctx.fillStyle = '#000000';
  ctx.fillText(doc.footer, 40, tableTop + rowHeight * rows.length + 70);
  return { image: await encode(image, kind), width, height };
}

/** A paragraph of prose only (no table), for the no-false-table check. */
export async function renderProse(lines: string[]): Promise<Buffer> {
  await loadFont();
  const width = 1000;
  const height = 80 + lines.length * 40;
  const image = PImage.make(width, height);
  const ctx = image.getContext('2d');
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, width, height);
  ctx.fillStyle = '#000000';
  ctx.font = `24px '${FONT}'`;
  lines.forEach((line, i) => ctx.fillText(line, 40, 60 + i * 40));
  return encode(image, 'png');
}

/** A valid PNG signature and IHDR announcing `width` x `height`, without pixel data: a decompression-bomb header. */
export function pngHeaderOnly(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // colour type RGB
  const chunk = Buffer.concat([Buffer.from([0, 0, 0, 13]), Buffer.from('IHDR'), ihdr, Buffer.alloc(4)]);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk]);
}
