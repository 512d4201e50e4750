/**
 * Fast recovery on real Kafka: a consumer process killed with SIGKILL leaves
 * its member in the group (no LeaveGroup); the process that replaces it on
 * the same machine must resume at once (about a second when the machine is
 * quiet), not after the dead member's session timeout
 * (KAFKA_SESSION_TIMEOUT_MS). Each member is a real child process
 * (test/integration/fixtures/group-member.ts) on the project's Kafka bus; the
 * session timeout is raised to 60 s here so that only the removal of the dead
 * member can explain a resume within a third of it, which leaves a busy
 * machine plenty of room. A live sibling member on the same machine is left
 * alone.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createKafkaBus } from '../../core/bus/kafka-bus.js';
import type { Bus } from '../../core/bus/bus.js';
import { eventually, testConfig, testLogger, uniqueName } from '../helpers/config.js';

const MEMBER = fileURLToPath(new URL('./fixtures/group-member.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const config = testConfig();
const SESSION_TIMEOUT_MS = 60_000;
/** Well below the session timeout, far above a quiet machine's resume (about a second). */
const RESUME_BOUND_MS = SESSION_TIMEOUT_MS / 3;

interface Member {
  child: ChildProcessWithoutNullStreams;
  spawnedAt: number;
  lines: () => string[];
  /** Epoch ms of the first line starting with `prefix` (and containing `text`), waiting for it. */
  at(prefix: string, text?: string, timeoutMs?: number): Promise<number>;
}

const members: Member[] = [];
afterAll(() => {
  for (const m of members) if (m.child.exitCode === null && m.child.signalCode === null) m.child.kill('SIGKILL');
});

function member(topic: string, group: string): Member {
  const spawnedAt = Date.now();
  const child = spawn(process.execPath, ['--import', 'tsx', MEMBER], {
    cwd: ROOT,
    env: {
      ...process.env,
      TOPIC: topic,
      GROUP: group,
      KAFKA_BROKERS: config.KAFKA_BROKERS.join(','),
      KAFKA_SESSION_TIMEOUT_MS: String(SESSION_TIMEOUT_MS),
      KAFKA_HEARTBEAT_INTERVAL_MS: '1000',
    },
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const lines = () => out.split('\n');
  const m: Member = {
    child,
    spawnedAt,
    lines,
    async at(prefix, text, timeoutMs = 60000) {
      const line = await eventually(
        async () => lines().find((l) => l.startsWith(`${prefix} `) && (text === undefined || l.includes(text))),
        (l) => l !== undefined || child.exitCode !== null,
        timeoutMs,
        20,
      );
      if (line === undefined) throw new Error(`member exited (${child.exitCode}) before "${prefix}":\n${out}`);
      return Number(line.split(' ').pop());
    },
  };
  members.push(m);
  return m;
}

/** The distinct values starting with `prefix` that any of `of` consumed (`consumed <value> <epoch ms>` lines). */
function consumedValues(of: Member[], prefix: string): Set<string> {
  const lines = of.flatMap((m) => m.lines()).filter((l) => l.startsWith(`consumed ${prefix}`));
  return new Set(lines.map((l) => l.split(' ')[1]!));
}

function kill(m: Member): Promise<void> {
  return new Promise((resolve) => {
    m.child.once('exit', () => resolve());
    m.child.kill('SIGKILL');
  });
}

describe('rejoin after a SIGKILL (real Kafka, child processes)', () => {
  let bus: Bus | undefined;
  afterAll(async () => {
    await bus?.close();
  });

  it('resumes at once (not after the session timeout) after a killed predecessor; leaves a live sibling alone', async () => {
    bus = await createKafkaBus({
      partitions: 3,
      batchSize: 100,
      maxAttempts: 3,
      retryBackoffMs: 50,
      logger: testLogger(),
      brokers: config.KAFKA_BROKERS,
      clientId: uniqueName('rejoin-test'),
      connectTimeoutMs: 10000,
    });
    const topic = uniqueName('rejoin');
    const group = uniqueName('rejoin_group');
    await bus.ensureTopics([topic]);
    const keys = ['a', 'b', 'c', 'd', 'e', 'f'];
    await bus.publish(
      topic,
      keys.map((k) => ({ key: k, value: `before-${k}` })),
    );

    // A live sibling and the member that will die share the group (and this machine).
    const sibling = member(topic, group);
    await sibling.at('joined');
    const doomed = member(topic, group);
    await doomed.at('joined');
    // At least once: a rebalance may hand a message to both; every one must have been consumed.
    await eventually(
      async () => consumedValues([sibling, doomed], 'before-').size,
      (n) => n === keys.length,
      60_000,
      50,
    );
    // Both hold partitions (3 partitions, 2 members).
    await eventually(
      async () => await bus!.committedOffsets(group, topic),
      (c) => Object.keys(c).length > 0,
      60_000,
      50,
    );

    await kill(doomed);

    const successor = member(topic, group);
    const startedAt = await successor.at('starting');
    const joinedAt = await successor.at('joined');
    // Published once the successor is in: keys a..f cover all 3 partitions, so it gets some of them.
    await bus.publish(
      topic,
      keys.map((k) => ({ key: k, value: `after-${k}` })),
    );
    const resumedAt = await successor.at('consumed', 'after-', SESSION_TIMEOUT_MS + 20000);
    await eventually(
      async () => consumedValues([sibling, successor], 'after-').size,
      (n) => n === keys.length,
      60_000,
      50,
    );
    const log = successor.lines().join('\n');
    console.log(
      `rejoin after SIGKILL: successor joined ${joinedAt - startedAt} ms after its consumer started, consumed ${resumedAt - startedAt} ms after it ` +
        `(${resumedAt - successor.spawnedAt} ms after its process was spawned, the new messages published on its join); session timeout ${SESSION_TIMEOUT_MS} ms`,
    );
    expect(log).toContain('removed the group members of a dead predecessor process');
    expect(joinedAt - startedAt).toBeLessThan(RESUME_BOUND_MS);
    expect(resumedAt - startedAt).toBeLessThan(RESUME_BOUND_MS);
    // The sibling was not evicted: still running, and never named as a dead member.
    expect(sibling.child.exitCode).toBeNull();
    expect(log).not.toContain(`"pid":${sibling.child.pid},`);
  }, 360_000);
});
