import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { ConfigError, loadConfig } from '../../core/config.js';
import { withConfigTable } from '../../scripts/config-docs.js';

describe('configuration', () => {
  it('has embedded defaults that need no server', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      ROLE: 'all',
      BUS: 'memory',
      STORE: 'duckdb',
      QUEUE: 'inprocess',
      HTTP_HOST: '127.0.0.1',
      DUCKDB_PATH: './data/gateway.duckdb',
    });
    expect(c.KAFKA_BROKERS).toEqual(['127.0.0.1:19092']);
  });

  it('parses overrides into typed values', () => {
    const c = loadConfig({ HTTP_PORT: '8080', KAFKA_BROKERS: 'a:1, b:2', BUS: 'kafka', DATA_DIR: '/tmp/x/' });
    expect(c.HTTP_PORT).toBe(8080);
    expect(c.KAFKA_BROKERS).toEqual(['a:1', 'b:2']);
    expect(c.DUCKDB_PATH).toBe('/tmp/x/gateway.duckdb');
  });

  it('reports every problem at once, naming each variable', () => {
    let error: unknown;
    try {
      loadConfig({ HTTP_PORT: '99999', REDIS_URL: 'http://x', KAFKA_BROKERS: 'nohost', ROLE: 'chef' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    for (const name of ['HTTP_PORT', 'REDIS_URL', 'KAFKA_BROKERS', 'ROLE']) expect(problems).toContain(`${name}=`);
  });

  it('docs/configuration.md documents every variable (table generated from the schema is current)', () => {
    const page = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
    expect(withConfigTable(page)).toBe(page);
  });
});
