// Module hooks (they run on the loader thread): record each resolved URL, change nothing.
import { appendFileSync } from 'node:fs';

let file;
export function initialize(data) {
  file = data?.file;
}

export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (file) appendFileSync(file, `${resolved.url}\n`);
  return resolved;
}
