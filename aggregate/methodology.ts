/**
 * The methodology version: one constant naming the detector's formulas and
 * rules (aggregate/spread-math.ts, dislocation-detector.ts, revision-rule.ts
 * and the defaults they are run with). Every row the detector writes
 * (`dislocations`, `spread_samples`, `stale_evaluations`) stores the version
 * that wrote it, and every answer built from those rows serves the versions
 * of its rows, so an old slice keeps the methodology it was computed with
 * after a change. Bump it with any change of a formula or a rule, and add the
 * change below and to docs/metrics.md ("Methodology versions").
 *
 *  - '1': rows written before the version was stored (the column's default):
 *    one 30 s maximum quote age for both legs.
 *  - '2': fresh legs only (DEX_MAX_QUOTE_AGE_MS, CEX_MAX_QUOTE_AGE_MS; skipped
 *    evaluations counted), legs and costs stored with each revision.
 */
export const METHODOLOGY_VERSION = '2';
