/** docker-compose.yml must validate with the Compose client (no Docker engine needed for `config`). */
import { describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function composeCommand(): string[] {
  if (spawnSync('docker', ['compose', 'version'], { stdio: 'ignore' }).status === 0) return ['docker', 'compose'];
  if (spawnSync('docker-compose', ['version'], { stdio: 'ignore' }).status === 0) return ['docker-compose'];
  throw new Error(
    'neither `docker compose` nor `docker-compose` is installed (scripts/engines.sh install provides it)',
  );
}

/** `config` rendered with the required variables set (and `extra`). */
function renderedConfig(extra: NodeJS.ProcessEnv = {}): string {
  const [cmd, ...args] = composeCommand();
  return execFileSync(cmd!, [...args, '-f', 'docker-compose.yml', 'config'], {
    cwd: ROOT,
    env: {
      ...process.env,
      CLICKHOUSE_PASSWORD: 'test-only',
      SETTLEMENT: 'remote',
      PAYMENT_PAY_TO: '0x000000000000000000000000000000000000dEaD',
      ...extra,
    },
    encoding: 'utf8',
  });
}

describe('docker-compose.yml', () => {
  it('validates and declares the engines and every role with health checks', () => {
    const out = renderedConfig();
    for (const service of ['kafka', 'clickhouse', 'redis', 'api', 'ingest', 'aggregate', 'worker']) {
      expect(out).toMatch(new RegExp(`^  ${service}:$`, 'm'));
    }
    expect(out).toContain('noeviction');
    expect(out).toMatch(/--appendonly\s*\n?\s*-?\s*"?no/); // no persistence: zero data retention of job payloads
    expect(out.match(/healthcheck:/g)?.length).toBeGreaterThanOrEqual(7);
  });

  it('scales the roles as docs/scaling.md says: aggregate replicas without the paper executor, workers, api replicas', () => {
    const out = renderedConfig({
      AGGREGATE_REPLICAS: '2',
      WORKER_REPLICAS: '3',
      API_REPLICAS: '2',
      BUS_PARTITIONS: '6',
    });
    const service = (name: string) => nextService(out, name);
    expect(service('aggregate')).toMatch(
      /AGGREGATE_PAPER_EXECUTOR: 'true'|AGGREGATE_PAPER_EXECUTOR: "true"|AGGREGATE_PAPER_EXECUTOR: true/,
    );
    expect(service('aggregate-replica')).toMatch(
      /AGGREGATE_PAPER_EXECUTOR: 'false'|AGGREGATE_PAPER_EXECUTOR: "false"|AGGREGATE_PAPER_EXECUTOR: false/,
    );
    expect(service('aggregate-replica')).toMatch(/replicas: 2/);
    expect(service('worker')).toMatch(/replicas: 3/);
    expect(service('api')).toMatch(/replicas: 2/);
    expect(service('api')).toMatch(/4020-4029/);
    expect(out.match(/BUS_PARTITIONS: '6'/g)?.length).toBe(5); // every app service
    expect(service('api')).toMatch(/PAYMENT_REPLAY_STORE: redis/); // replicas share the replay lock and the settler's nonce lease
  });

  it('limits every container (CPU and memory) and caps Redis with noeviction', () => {
    const out = renderedConfig();
    const services = ['kafka', 'clickhouse', 'redis', 'api', 'ingest', 'aggregate', 'aggregate-replica', 'worker'];
    for (const name of services) {
      expect(nextService(out, name), name).toMatch(/limits:\n\s+cpus: [\d.'"]+\n\s+memory: \S+/);
    }
    expect(nextService(out, 'redis')).toMatch(/--maxmemory\s*\n?\s*-?\s*'?"?\d+mb/);
  });

  it('refuses to render without the settlement variables (the api would refuse the dev chain in production)', () => {
    const [cmd, ...args] = composeCommand();
    for (const missing of ['SETTLEMENT', 'PAYMENT_PAY_TO']) {
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        CLICKHOUSE_PASSWORD: 'test-only',
        SETTLEMENT: 'remote',
        PAYMENT_PAY_TO: '0x000000000000000000000000000000000000dEaD',
      };
      delete env[missing];
      const r = spawnSync(cmd!, [...args, '-f', 'docker-compose.yml', 'config'], { cwd: ROOT, env, encoding: 'utf8' });
      expect(r.status, missing).not.toBe(0);
      expect(`${r.stdout}${r.stderr}`).toContain(missing);
    }
  });

  it('refuses to render without the ClickHouse password secret', () => {
    const [cmd, ...args] = composeCommand();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      SETTLEMENT: 'remote',
      PAYMENT_PAY_TO: '0x000000000000000000000000000000000000dEaD',
    };
    delete env.CLICKHOUSE_PASSWORD;
    const r = spawnSync(cmd!, [...args, '-f', 'docker-compose.yml', 'config'], { cwd: ROOT, env, encoding: 'utf8' });
    expect(r.status).not.toBe(0);
    expect(`${r.stdout}${r.stderr}`).toContain('CLICKHOUSE_PASSWORD');
  });
});

/** The text of one service in `config` output (from its name to the next top-level service). */
function nextService(out: string, name: string): string {
  const start = out.indexOf(`\n  ${name}:\n`);
  const rest = out.slice(start + 1);
  const next = rest.slice(1).search(/\n {2}[a-z][a-z-]*:\n/);
  return next === -1 ? rest : rest.slice(0, next + 1);
}
