/** docker-compose.yml must validate with the Compose client (no Docker engine needed for `config`). */
import { describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function composeCommand(): string[] {
  if (spawnSync('docker', ['compose', 'version'], { stdio: 'ignore' }).status === 0) return ['docker', 'compose'];
  if (spawnSync('docker-compose', ['version'], { stdio: 'ignore' }).status === 0) return ['docker-compose'];
  throw new Error('neither `docker compose` nor `docker-compose` is installed (scripts/engines.sh install provides it)');
}

describe('docker-compose.yml', () => {
  it('validates and declares the engines and every role with health checks', () => {
    const [cmd, ...args] = composeCommand();
    const out = execFileSync(cmd!, [...args, '-f', 'docker-compose.yml', 'config'], {
      cwd: ROOT,
      env: { ...process.env, CLICKHOUSE_PASSWORD: 'test-only', SETTLEMENT: 'remote', PAYMENT_PAY_TO: '0x000000000000000000000000000000000000dEaD' },
      encoding: 'utf8',
    });
    for (const service of ['kafka', 'clickhouse', 'redis', 'api', 'ingest', 'aggregate', 'worker']) {
      expect(out).toMatch(new RegExp(`^  ${service}:$`, 'm'));
    }
    expect(out).toContain('noeviction');
    expect(out).toMatch(/--appendonly\s*\n?\s*-?\s*"?no/); // no persistence: zero data retention of job payloads
    expect(out.match(/healthcheck:/g)?.length).toBeGreaterThanOrEqual(7);
  });

  it('refuses to render without the settlement variables (the api would refuse the dev chain in production)', () => {
    const [cmd, ...args] = composeCommand();
    for (const missing of ['SETTLEMENT', 'PAYMENT_PAY_TO']) {
      const env: NodeJS.ProcessEnv = { ...process.env, CLICKHOUSE_PASSWORD: 'test-only', SETTLEMENT: 'remote', PAYMENT_PAY_TO: '0x000000000000000000000000000000000000dEaD' };
      delete env[missing];
      const r = spawnSync(cmd!, [...args, '-f', 'docker-compose.yml', 'config'], { cwd: ROOT, env, encoding: 'utf8' });
      expect(r.status, missing).not.toBe(0);
      expect(`${r.stdout}${r.stderr}`).toContain(missing);
    }
  });

  it('refuses to render without the ClickHouse password secret', () => {
    const [cmd, ...args] = composeCommand();
    const env: NodeJS.ProcessEnv = { ...process.env, SETTLEMENT: 'remote', PAYMENT_PAY_TO: '0x000000000000000000000000000000000000dEaD' };
    delete env.CLICKHOUSE_PASSWORD;
    const r = spawnSync(cmd!, [...args, '-f', 'docker-compose.yml', 'config'], { cwd: ROOT, env, encoding: 'utf8' });
    expect(r.status).not.toBe(0);
    expect(`${r.stdout}${r.stderr}`).toContain('CLICKHOUSE_PASSWORD');
  });
});
