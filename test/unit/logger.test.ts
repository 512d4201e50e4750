/**
 * Log lines a person and a parser can read: JSON lines carry each key once
 * (a child's binding replaces its parent's, a call's field replaces a
 * binding), pretty mode prints one coloured-or-plain line per record, and
 * `auto` follows whether the destination is a terminal.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, type LogFormat } from '../../core/logger.js';
import { duplicatedKeys } from '../helpers/json-keys.js';

function collector(isTTY = false) {
  const lines: string[] = [];
  let buffer = '';
  const stream = new Writable({
    write(chunk, _enc, done) {
      buffer += chunk.toString();
      let i: number;
      while ((i = buffer.indexOf('\n')) >= 0) {
        lines.push(buffer.slice(0, i));
        buffer = buffer.slice(i + 1);
      }
      done();
    },
  });
  Object.assign(stream, { isTTY });
  return { stream, lines };
}

const settle = () => new Promise((r) => setTimeout(r, 20));

function loggerInto(format: LogFormat, isTTY = false) {
  const out = collector(isTTY);
  return {
    log: createLogger('info', { role: 'all' }, { format, destination: out.stream, colorize: false }),
    lines: out.lines,
  };
}

describe('logger', () => {
  it('JSON: a child binding replaces the parent one, also two levels down', async () => {
    const { log, lines } = loggerInto('json');
    const ingest = log.child({ ingestor: 'cex' });
    ingest.child({ ingestor: 'cex', exchange: 'coinbase' }).warn({ symbol: 'BTC/USD' }, 'polling REST');
    log.child({ role: 'aggregate' }).info('consumer started');
    await settle();
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(duplicatedKeys(line)).toEqual([]);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      role: 'all',
      ingestor: 'cex',
      exchange: 'coinbase',
      symbol: 'BTC/USD',
      msg: 'polling REST',
    });
    expect(JSON.parse(lines[1]!)).toMatchObject({ role: 'aggregate', msg: 'consumer started' });
  });

  it('JSON: a call field named like a binding replaces it for that line only', async () => {
    const { log, lines } = loggerInto('json');
    log.info({ role: 'worker' }, 'role started');
    log.info({ other: 1 }, 'plain');
    await settle();
    expect(duplicatedKeys(lines[0]!)).toEqual([]);
    expect(JSON.parse(lines[0]!)).toMatchObject({ role: 'worker', service: 'x402-gateway', msg: 'role started' });
    expect(JSON.parse(lines[1]!)).toMatchObject({ role: 'all', other: 1 });
  });

  it('JSON: errors and redaction still work through the hooks', async () => {
    const { log, lines } = loggerInto('json');
    log.error(new Error('boom'), 'failed');
    log.info({ req: { body: 'secret payload' } }, 'payload');
    await settle();
    expect(JSON.parse(lines[0]!)).toMatchObject({ msg: 'failed', err: { message: 'boom' } });
    expect(JSON.parse(lines[1]!).req.body).toBe('[redacted]');
  });

  it('pretty: one readable line per record, fields inline, no JSON object', async () => {
    const { log, lines } = loggerInto('pretty');
    log.child({ ingestor: 'cex' }).child({ ingestor: 'cex' }).info({ symbol: 'ETH/USD' }, 'book ok');
    await settle();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\[\d{2}:\d{2}:\d{2}\.\d{3}\] INFO: book ok/);
    expect(lines[0]).toContain('"symbol":"ETH/USD"');
    expect(lines[0]!.match(/"ingestor"/g)).toHaveLength(1);
    expect(lines[0]).not.toContain('"level"');
  });

  it('auto: pretty on a terminal, JSON otherwise', async () => {
    const tty = loggerInto('auto', true);
    const pipe = loggerInto('auto', false);
    tty.log.info('hello');
    pipe.log.info('hello');
    await settle();
    expect(tty.lines[0]).toMatch(/INFO: hello/);
    expect(JSON.parse(pipe.lines[0]!)).toMatchObject({ level: 30, msg: 'hello' });
  });
});
