import { logLevel } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { kafkaLogCreator, kafkaLogLevel } from '../../core/bus/kafka-log.js';
import type { Logger } from '../../core/logger.js';

describe('kafkajs log levels', () => {
  it('puts the broker answers kafkajs handles itself below info, rebalances at info', () => {
    const response = (error: string) =>
      kafkaLogLevel('Connection', logLevel.ERROR, 'Response CreateTopics(key: 19, version: 3)', error);
    expect(response('Topic creation errors')).toBe('debug');
    expect(
      response('There is no leader for this topic-partition as we are in the middle of a leadership election'),
    ).toBe('debug');
    expect(response('This is not the correct coordinator for this group')).toBe('debug');
    expect(response("The coordinator is loading and hence can't process requests")).toBe('debug');
    expect(response('The group is rebalancing, so a rejoin is needed')).toBe('info');
    expect(
      kafkaLogLevel('Runner', logLevel.ERROR, 'The coordinator is not aware of this member, re-joining the group'),
    ).toBe('info');
    expect(
      kafkaLogLevel(
        'Producer',
        logLevel.ERROR,
        'Failed to send messages: There is no leader for this topic-partition as we are in the middle of a leadership election',
      ),
    ).toBe('debug');
  });

  it('keeps what needs an operator: unknown broker answers warn, crashes stay errors', () => {
    expect(
      kafkaLogLevel(
        'Connection',
        logLevel.ERROR,
        'Response Produce(key: 0, version: 7)',
        'Not authorized to access topics: [Topic authorization failed]',
      ),
    ).toBe('warn');
    expect(
      kafkaLogLevel(
        'Consumer',
        logLevel.ERROR,
        'Crash: KafkaJSNumberOfRetriesExceeded: Connection error: connect ECONNREFUSED',
      ),
    ).toBe('error');
    expect(
      kafkaLogLevel(
        'BrokerPool',
        logLevel.ERROR,
        'Failed to connect to seed broker, trying another broker from the list: Connection timeout',
      ),
    ).toBe('error');
    expect(kafkaLogLevel('Admin', logLevel.WARN, 'Could not delete groups')).toBe('warn');
  });

  it("writes the entry to pino with its fields, without kafkajs' own timestamp and logger name", () => {
    const calls: [string, Record<string, unknown>, string][] = [];
    const logger = Object.fromEntries(
      ['error', 'warn', 'info', 'debug'].map((l) => [
        l,
        (o: Record<string, unknown>, m: string) => calls.push([l, o, m]),
      ]),
    ) as unknown as Logger;
    const log = kafkaLogCreator(logger)();
    log({
      namespace: 'Connection',
      level: logLevel.ERROR,
      label: 'ERROR',
      log: {
        message: 'Response CreateTopics(key: 19, version: 3)',
        timestamp: 'x',
        logger: 'kafkajs',
        error: 'Topic creation errors',
        broker: 'b:1',
      } as never,
    });
    expect(calls).toEqual([
      [
        'debug',
        { namespace: 'Connection', error: 'Topic creation errors', broker: 'b:1' },
        'Response CreateTopics(key: 19, version: 3)',
      ],
    ]);
  });
});
