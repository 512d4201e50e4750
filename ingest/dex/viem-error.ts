/**
 * One line for a viem error, for logs and health: viem errors carry a
 * one-line `shortMessage`; their full message has request details (URLs may
 * hold API keys), so only its first line is used when there is no short one.
 * At most 300 characters.
 */
export function shortError(err: unknown): string {
  if (err && typeof err === 'object') {
    const short = (err as { shortMessage?: unknown }).shortMessage;
    if (typeof short === 'string' && short) return short.slice(0, 300);
  }
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 300);
}
