/** Duplicate keys in a JSON text (JSON.parse keeps the last one silently; log shippers differ). */
import { visit } from 'jsonc-parser';

/** Keys that appear twice in one JSON object of `line` (any depth). */
export function duplicatedKeys(line: string): string[] {
  const stack: Set<string>[] = [];
  const dups: string[] = [];
  visit(line, {
    onObjectBegin: () => void stack.push(new Set()),
    onObjectEnd: () => void stack.pop(),
    onObjectProperty: (name) => {
      const seen = stack[stack.length - 1]!;
      if (seen.has(name)) dups.push(name);
      seen.add(name);
    },
  });
  return dups;
}
