/**
 * Every route's published input schema (OpenAPI, MCP tools, Bazaar: one JSON Schema per SKU) is at least as
 * strict as its validator: a request that the schema accepts is never refused with a 400. Strings are sampled
 * from each pattern the schema declares (randexp), kept when the property's whole schema accepts them (ajv with
 * formats: randexp ignores look-aheads, and `format` narrows a pattern), put into the route's own example, and
 * run through the route's zod input; and the inputs an outside schema fuzzer found accepted by the schema but
 * refused by the validator are now refused by the schema too.
 */
import { describe, expect, it } from 'vitest';
import randexp from 'randexp';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { loadConfig } from '../../core/config.js';
import { loadPairs } from '../../core/markets/pairs.js';
import { buildCatalogue } from '../../api/catalogue/catalogue.js';
import { inputJsonSchema } from '../../api/sku/json-schema.js';
import type { PricedSku } from '../../api/sku/sku.js';

// randexp is CommonJS (`module.exports = RandExp`) while its typings describe an ES default export.
const RandExp = randexp as unknown as typeof randexp.default;

const catalogue = buildCatalogue({ config: loadConfig({ NODE_ENV: 'test' }), pairs: loadPairs() });
const sku = (id: string): PricedSku => catalogue.skus.find((s) => s.id === id)!;
const SAMPLES = 150;

type Property = { type?: string; pattern?: string; format?: string; minLength?: number; maxLength?: number };

const ajv = new Ajv2020({ strict: false });
addFormats.default(ajv);

/** A deterministic pseudo-random source for randexp (mulberry32), so a failure reproduces. */
function seeded(seed: number): (a: number, b: number) => number {
  let t = seed;
  return (a, b) => {
    t = (t + 0x6d2b79f5) | 0;
    let r = Math.imul(t ^ (t >>> 15), 1 | t);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return a + Math.floor((((r ^ (r >>> 14)) >>> 0) / 4294967296) * (b - a + 1));
  };
}

function patternSamples(property: Property, seed: number): string[] {
  const generator = new RandExp(new RegExp(property.pattern!));
  generator.max = 8;
  generator.randInt = seeded(seed);
  const fits = ajv.compile(property);
  const out: string[] = [];
  for (let i = 0; i < SAMPLES * 40 && out.length < SAMPLES; i++) {
    const text = generator.gen();
    if (fits(text)) out.push(text);
  }
  return out;
}

describe('published input schemas are as strict as the validators', () => {
  const patterned = catalogue.skus.flatMap((s) =>
    Object.entries((inputJsonSchema(s).properties ?? {}) as Record<string, Property>)
      .filter(([, p]) => p.type === 'string' && p.pattern)
      .map(([field, p]) => ({ sku: s, field, property: p })),
  );

  it('declares a pattern for the URL, domain and pair inputs', () => {
    const named = patterned.map((p) => `${p.sku.id}.${p.field}`);
    expect(named).toEqual(
      expect.arrayContaining(['stealth-dom.url', 'image-ocr-shrink.imageUrl', 'domain-check.domain']),
    );
    expect(named.some((n) => n.endsWith('.pair'))).toBe(true);
  });

  it.each(patterned.map((p) => [`${p.sku.id} ${p.field}`, p] as const))(
    '%s: every string sampled from the schema passes the validator',
    (_name, { sku: s, field, property }) => {
      const samples = patternSamples(property, field.length * 7919 + s.id.length);
      expect(samples.length).toBeGreaterThan(SAMPLES / 3);
      const refused = samples.filter((v) => !s.input.safeParse({ ...s.exampleInput, [field]: v }).success);
      expect(refused.slice(0, 5)).toEqual([]);
    },
  );

  it('refuses, in the schema itself, what the validator refuses (an outside fuzzer found these)', () => {
    const cases: [string, Record<string, unknown>][] = [
      ['stealth-dom', { url: '' }],
      ['stealth-dom', { url: 'http://localhost/' }],
      ['stealth-dom', { url: 'http://10.0.0.1/' }],
      ['stealth-dom', { url: 'http://metadata.google.internal/' }],
      ['image-ocr-shrink', { imageUrl: '' }],
      ['domain-check', { domain: '0' }],
      ['domain-check', { domain: 'example' }],
      ['spread-candles', { pair: '0/USD' }],
      ['spread-candles', { date: '2026-02-30' }],
      ['spread-candles', { date: '2025-02-29' }],
    ];
    for (const [id, patch] of cases) {
      const s = sku(id);
      const input = { ...s.exampleInput, ...patch };
      expect(s.input.safeParse(input).success, `${id} ${JSON.stringify(patch)}: validator`).toBe(false);
      expect(ajv.validate(inputJsonSchema(s), input), `${id} ${JSON.stringify(patch)}: schema`).toBe(false);
    }
    for (const s of catalogue.skus)
      expect(ajv.validate(inputJsonSchema(s), s.exampleInput), `${s.id}: its own example`).toBe(true);
  });
});
