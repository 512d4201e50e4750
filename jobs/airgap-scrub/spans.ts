/**
 * Entity spans and their deterministic resolution into redactions.
 *
 * Every detector (the pattern detectors in detectors.ts, and in strict mode
 * any AI provider's `findSensitiveSpans`) reports spans of the input
 * (UTF-16 offsets, end exclusive). Spans that overlap form one cluster; a
 * cluster is redacted as ONE replacement covering the union of its spans (so
 * no fragment of a partially overlapping entity survives), labelled by its
 * winner: the longest span, then the most specific kind (PRIORITY), then the
 * earliest. The result does not depend on the order detectors report in.
 */

export const ENTITY_KINDS = ['EMAIL', 'CREDIT_CARD', 'SSN', 'PHONE', 'ADDRESS', 'ZIP', 'NAME', 'BIO'] as const;
export type EntityKind = (typeof ENTITY_KINDS)[number];

/** Higher wins a tie in length: checksummed and syntactically exact kinds first, AI judgements last. */
const PRIORITY: Record<EntityKind, number> = {
  EMAIL: 8,
  CREDIT_CARD: 7,
  SSN: 6,
  PHONE: 5,
  ADDRESS: 4,
  ZIP: 3,
  NAME: 2,
  BIO: 1,
};

export interface Span {
  start: number;
  end: number;
  kind: EntityKind;
}

export interface Redaction extends Span {
  /** Every kind whose text this replacement removed (the winner's first). */
  kinds: EntityKind[];
}

export const labelOf = (kind: EntityKind): string => `[${kind}]`;

const beats = (a: Span, b: Span): boolean => {
  const la = a.end - a.start;
  const lb = b.end - b.start;
  if (la !== lb) return la > lb;
  if (PRIORITY[a.kind] !== PRIORITY[b.kind]) return PRIORITY[a.kind] > PRIORITY[b.kind];
  return a.start < b.start;
};

/** Overlapping spans merged into non-overlapping redactions, in text order. */
export function resolveSpans(spans: readonly Span[], textLength: number): Redaction[] {
  const valid = spans
    .filter(
      (s) =>
        Number.isInteger(s.start) &&
        Number.isInteger(s.end) &&
        s.start >= 0 &&
        s.end <= textLength &&
        s.start < s.end &&
        Object.hasOwn(PRIORITY, s.kind),
    )
    .sort((a, b) => a.start - b.start || b.end - a.end);
  const out: Redaction[] = [];
  let i = 0;
  while (i < valid.length) {
    const first = valid[i]!;
    let end = first.end;
    let winner = first;
    const kinds = new Set<EntityKind>([first.kind]);
    i++;
    while (i < valid.length && valid[i]!.start < end) {
      const s = valid[i]!;
      end = Math.max(end, s.end);
      kinds.add(s.kind);
      if (beats(s, winner)) winner = s;
      i++;
    }
    kinds.delete(winner.kind);
    out.push({ start: first.start, end, kind: winner.kind, kinds: [winner.kind, ...kinds] });
  }
  return out;
}

/** The text with every redaction replaced by its label, and the kinds removed in order of first appearance. */
export function applyRedactions(
  text: string,
  redactions: readonly Redaction[],
): { scrubbed: string; kinds: EntityKind[] } {
  const parts: string[] = [];
  const kinds = new Set<EntityKind>();
  let at = 0;
  for (const r of redactions) {
    parts.push(text.slice(at, r.start), labelOf(r.kind));
    for (const k of r.kinds) kinds.add(k);
    at = r.end;
  }
  parts.push(text.slice(at));
  return { scrubbed: parts.join(''), kinds: [...kinds] };
}
