/**
 * Re-driving a dead letter: the original message (key, value, its own
 * headers) goes back to the topic it came from, without the DLQ headers and
 * with `dlq-redriven-from` naming the dead letter it came from, so a message
 * that fails again can be traced to its earlier dead letter. It is a new
 * message at a new offset: if it fails again it is dead-lettered again, with
 * its new origin. Sinks are idempotent by event id, so a re-driven message
 * that had been stored meanwhile counts once.
 */
import { DLQ_HEADERS, type BusMessage, type OutgoingMessage } from './bus.js';

export const REDRIVEN_FROM_HEADER = 'dlq-redriven-from';

const DLQ_HEADER_NAMES = new Set<string>([...Object.values(DLQ_HEADERS), REDRIVEN_FROM_HEADER]);

/** `<dlq topic>[<partition>]@<offset>` of a dead letter. */
export const deadLetterLabel = (deadLetter: BusMessage) =>
  `${deadLetter.topic}[${deadLetter.partition}]@${deadLetter.offset}`;

export function redriveMessage(deadLetter: BusMessage): OutgoingMessage {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(deadLetter.headers))
    if (!DLQ_HEADER_NAMES.has(name)) headers[name] = value;
  headers[REDRIVEN_FROM_HEADER] = deadLetterLabel(deadLetter);
  return { key: deadLetter.key, value: deadLetter.value, headers };
}
