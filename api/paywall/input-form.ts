/**
 * The paywall's form for a POST route: one field per top-level property of
 * the route's input JSON Schema (the same schema discovery and /openapi.json
 * publish, api/sku/json-schema.ts), prefilled with the route's example input.
 *
 *   enum                 -> <select> (with "(default)" when optional)
 *   boolean              -> <select> (default / true / false)
 *   integer, number      -> <input type=number> with min/max
 *   string               -> <input> (a <textarea> when it may exceed 2048 characters)
 *   anything else        -> <textarea> holding JSON (arrays, unions such as `string | string[]`)
 *
 * Each field carries `data-kind` (string, number, boolean, json) so the page's
 * script (static/paywall.js) builds the JSON body; an empty optional field is
 * left out of it. Only length and range limits go into the HTML: the schema's
 * regular expressions are not valid HTML `pattern`s in every case, and the
 * server validates every field anyway (a 400 naming the field, before any
 * payment is asked).
 */
import { escapeHtml as h } from '../dashboard/html.js';
import type { JsonSchema } from '../sku/json-schema.js';

type Kind = 'string' | 'number' | 'boolean' | 'json';

/** Longest string kept in a one-line <input>; longer ones get a <textarea>. */
const ONE_LINE_MAX = 2048;

interface Field {
  name: string;
  schema: JsonSchema;
  required: boolean;
  example: unknown;
}

export function inputForm(schema: JsonSchema, example: Record<string, unknown>): string {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required ?? []) as string[]);
  const fields = Object.entries(properties).map(([name, s]) =>
    fieldHtml({ name, schema: s, required: required.has(name), example: example[name] }),
  );
  return `<form id="call-form" class="call-form" novalidate>
${fields.join('\n')}
</form>`;
}

function kindOf(s: JsonSchema): Kind {
  if (s.type === 'boolean') return 'boolean';
  if (s.type === 'integer' || s.type === 'number') return 'number';
  if (s.type === 'string' || Array.isArray(s.enum)) return 'string';
  return 'json';
}

function fieldHtml(f: Field): string {
  const kind = kindOf(f.schema);
  const id = `field-${f.name}`;
  const description = typeof f.schema.description === 'string' ? f.schema.description : '';
  const label = `<label for="${h(id)}"><code>${h(f.name)}</code>${f.required ? ' <span class="req">(required)</span>' : ' <span class="muted">(optional)</span>'}</label>`;
  const common = `id="${h(id)}" name="${h(f.name)}" data-kind="${kind}"${f.required ? ' required' : ''} aria-describedby="${h(id)}-help"`;
  const hint = kind === 'json' ? 'A JSON value (a string in quotes, a list in brackets). ' : '';
  const help = `<small id="${h(id)}-help" class="muted">${h(hint + description)}</small>`;
  return `<div class="field">${label}${control(f, kind, common)}${help}</div>`;
}

function control(f: Field, kind: Kind, common: string): string {
  const s = f.schema;
  if (Array.isArray(s.enum)) {
    const options = (s.enum as unknown[]).map(String);
    const blank = f.required ? '' : '<option value="">(default)</option>';
    return `<select ${common}>${blank}${options.map((o) => `<option${o === f.example ? ' selected' : ''}>${h(o)}</option>`).join('')}</select>`;
  }
  if (kind === 'boolean') {
    const pick = (v: string) => (String(f.example) === v ? ' selected' : '');
    return `<select ${common}><option value="">(default)</option><option${pick('true')}>true</option><option${pick('false')}>false</option></select>`;
  }
  if (kind === 'number') {
    const bounds = ['minimum', 'maximum']
      .filter((k) => typeof s[k] === 'number')
      .map((k) => ` ${k.slice(0, 3)}="${String(s[k])}"`)
      .join('');
    const step = s.type === 'integer' ? '1' : 'any';
    const value = f.example === undefined ? '' : ` value="${h(String(f.example))}"`;
    return `<input type="number" step="${step}"${bounds}${value} ${common}>`;
  }
  if (kind === 'string') {
    const max = typeof s.maxLength === 'number' ? ` maxlength="${s.maxLength}"` : '';
    const value = f.example === undefined ? '' : String(f.example);
    if (typeof s.maxLength === 'number' && s.maxLength > ONE_LINE_MAX)
      return `<textarea rows="4"${max} ${common}>${h(value)}</textarea>`;
    return `<input type="text"${max} value="${h(value)}" ${common}>`;
  }
  const json = f.example === undefined ? '' : JSON.stringify(f.example);
  return `<textarea rows="3" ${common} spellcheck="false">${h(json)}</textarea>`;
}
