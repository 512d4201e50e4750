/**
 * Readiness per family from the health probes (core/readiness.ts), and /health's verdict from it: a family is not
 * ready while one of its components is down, with the family's code and the component's reason; it turns ready
 * again at the next refresh after the component answers; the overall status is `degraded` while one dependency of
 * several is away and `down` only when no family can serve. Probes are plain functions whose answer the test sets.
 */
import { describe, expect, it } from 'vitest';
import { HealthRegistry, type ProbeResult } from '../../core/health.js';
import { familiesOf, Readiness } from '../../core/readiness.js';

function registry(components: string[]) {
  const health = new HealthRegistry({ version: 't', role: 'api' }, 500);
  const answers = new Map<string, ProbeResult | Error>(components.map((c) => [c, { status: 'ok' }]));
  const calls = new Map<string, number>();
  for (const name of components)
    health.register(name, async () => {
      calls.set(name, (calls.get(name) ?? 0) + 1);
      const a = answers.get(name)!;
      if (a instanceof Error) throw a;
      return a;
    });
  return { health, answers, calls };
}

describe('readiness per family', () => {
  it('turns a family not ready while a component it needs is down, with its code and reason, and back', async () => {
    const { health, answers } = registry(['store', 'queue', 'workers', 'pipeline']);
    const readiness = new Readiness(health, 'api', familiesOf(['api']), 60_000);
    await readiness.start();
    try {
      expect(readiness.report()).toMatchObject({
        ready: true,
        families: { telemetry: { ready: true }, jobs: { ready: true } },
      });
      expect(readiness.refusal('telemetry')).toBeUndefined();

      answers.set('store', new Error('connect ECONNREFUSED 127.0.0.1:18123'));
      await readiness.refresh();
      const telemetry = readiness.family('telemetry')!;
      expect(telemetry).toMatchObject({ ready: false, code: 'store_unavailable' });
      expect(telemetry.reason).toBe('store: connect ECONNREFUSED 127.0.0.1:18123');
      expect(readiness.family('jobs')).toMatchObject({ ready: true });
      const refusal = readiness.refusal('telemetry')!;
      expect(refusal).toMatchObject({ code: 'store_unavailable', status: 503 });
      expect(refusal.details).toMatchObject({ family: 'telemetry', reason: telemetry.reason });
      expect(readiness.report().ready).toBe(true); // jobs still served

      // One dependency of several away: degraded (200), not down.
      expect((await health.check()).status).toBe('degraded');

      // A degraded component (e.g. failing writes, ping answering) does not take its family out.
      answers.set('store', { status: 'degraded', reason: 'writes failing' });
      await readiness.refresh();
      expect(readiness.family('telemetry')).toMatchObject({ ready: true });

      answers.set('store', { status: 'ok' });
      await readiness.refresh();
      expect(readiness.family('telemetry')).toMatchObject({ ready: true });
      expect((await health.check()).status).toBe('ok');
    } finally {
      readiness.stop();
    }
  });

  it('is down only when no family can serve', async () => {
    const { health, answers } = registry(['store', 'queue', 'workers']);
    const readiness = new Readiness(health, 'api', familiesOf(['api']), 60_000);
    await readiness.start();
    try {
      answers.set('workers', { status: 'down', reason: 'no worker heartbeat' });
      await readiness.refresh();
      expect(readiness.family('jobs')).toMatchObject({ ready: false, code: 'queue_unavailable' });
      expect((await health.check()).status).toBe('degraded');
      answers.set('store', new Error('gone'));
      const report = await health.check();
      expect(report.status).toBe('down');
      expect(readiness.report().ready).toBe(false);
    } finally {
      readiness.stop();
    }
  });

  it('the aggregate without its store (bus up) is degraded, not down; a worker without its queue is down', async () => {
    const aggregate = registry(['bus', 'store']);
    const a = new Readiness(aggregate.health, 'aggregate', familiesOf(['aggregate']), 60_000);
    await a.start();
    try {
      aggregate.answers.set('store', new Error('clickhouse gone'));
      await a.refresh();
      expect(a.report().ready).toBe(false);
      expect((await aggregate.health.check()).status).toBe('degraded');
    } finally {
      a.stop();
    }
    const worker = registry(['queue']);
    const w = new Readiness(worker.health, 'worker', familiesOf(['worker']), 60_000);
    await w.start();
    try {
      worker.answers.set('queue', new Error('redis gone'));
      await w.refresh();
      expect((await worker.health.check()).status).toBe('down');
    } finally {
      w.stop();
    }
  });

  it('runs only the probes the families need, and a /health check refreshes them too', async () => {
    const { health, answers, calls } = registry(['store', 'queue', 'pipeline']);
    const readiness = new Readiness(health, 'api', familiesOf(['api'], ['workers']), 60_000);
    await readiness.start();
    readiness.stop();
    expect(calls.get('pipeline')).toBeUndefined();
    expect(calls.get('store')).toBe(1);
    answers.set('queue', new Error('redis gone'));
    await health.check(); // e.g. someone looked at /health
    expect(readiness.family('jobs')).toMatchObject({ ready: false, reason: 'queue: redis gone' });
    expect(calls.get('pipeline')).toBe(1);
  });
});
