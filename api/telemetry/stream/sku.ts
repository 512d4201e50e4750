/**
 * stream: the live stream of dislocations and closed candles, server-sent
 * events paid per minute in advance. The whole public contract of the
 * telemetry SKU and its runtime (handler.ts); the catalogue lists it in
 * api/catalogue/sku-list.ts. Its open streams are counted per catalogue (one
 * per api role: STREAM_MAX_CONCURRENT per process). Served over HTTP only
 * (`delivery: 'event-stream'`: api/sku/streamed-answer.ts); the MCP and
 * A2A doors answer one JSON per call and refuse it before payment.
 */
import { defineTelemetrySku, type TelemetrySkuDeps } from '../telemetry-sku.js';
import type { StreamedDelivery } from '../../sku/streamed-answer.js';
import {
  MAX_STREAM_MINUTES,
  STREAM_EXAMPLE,
  StreamEventSchema,
  streamHandler,
  streamInput,
  streamPreflight,
  type StreamInput,
  type StreamPrepared,
} from './handler.js';
import { StreamSlots } from './stream-slots.js';

export function streamSku({ pairs }: TelemetrySkuDeps) {
  const slots = new StreamSlots();
  const sku = defineTelemetrySku<StreamInput, unknown, StreamPrepared>({
    id: 'stream',
    method: 'GET',
    path: '/api/v1/crypto/stream',
    title: 'Live stream: dislocations and closed candles (server-sent events)',
    categories: ['Data', 'Finance', 'Trading', 'Blockchain'],
    defaultPriceAtomic: '10000',
    free: false,
    input: streamInput(pairs),
    output: StreamEventSchema,
    exampleInput: { minutes: 5, pair: 'ETH/USD' },
    example: STREAM_EXAMPLE,
    description: `Server-sent events (text/event-stream) of CEX/DEX dislocations as they open, are revised and close (each revision as a dislocations item) and of each closed 15-minute spread candle (as the spread-candles answer), for one pair or all. The price is per minute, paid in advance: the route price x \`minutes\` (1-${MAX_STREAM_MINUTES}, at most 0.2 USD a call). Each event has an id; the first event (and the Stream-Token header) carries a resume token: reconnect with \`?token=\` and Last-Event-ID to get exactly the events after it, up to the period's end, nothing paid. The stream ends with \`event: end\` when the period is over. HTTP only (not over MCP or A2A).`,
    avgLatencyMs: 50,
    latencyTargetMs: 200,
    available: true,
    preflight: streamPreflight(slots),
    handler: streamHandler(slots),
    dayBlock: null,
  });
  const delivery: StreamedDelivery = { delivery: 'event-stream' };
  return Object.assign(sku, delivery);
}
