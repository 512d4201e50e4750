/** HTML text helpers for the server-rendered pages (landing page, paywall): escaping, JSON safe inside a <script> element, the pages' common head. */

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text or attribute value, escaped. */
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ENTITIES[c]!);

/** JSON for a `<script type="application/json">` element: no `</script>` or `<!--` can end it early. */
export const scriptJson = (value: unknown): string =>
  JSON.stringify(value).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');

/** The opening of a server-rendered page up to its stylesheet link: doctype, charset, viewport, no favicon request, the title. */
export const pageOpening = (title: string, stylesheetUrl: string): string => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="${stylesheetUrl}">`;
