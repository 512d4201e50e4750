/**
 * The API's listening socket: a keep-alive timeout longer than clients and
 * load balancers keep idle connections (advertised in `Keep-Alive`), and a
 * listen backlog that takes a burst of new connections (HTTP_LISTEN_BACKLOG),
 * both from the config.
 */
import { execFileSync } from 'node:child_process';
import { request, Agent } from 'node:http';
import Koa from 'koa';
import { afterEach, describe, expect, it } from 'vitest';
import { listen, type HttpServer } from '../../api/http-server.js';
import { loadConfig } from '../../core/config.js';

let http: HttpServer | undefined;
afterEach(async () => {
  await http?.close();
  http = undefined;
});

const app = () => {
  const koa = new Koa();
  koa.use((ctx) => {
    ctx.body = { ok: true };
  });
  return koa;
};

function get(url: string, agent?: Agent): Promise<{ status: number; keepAlive: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: agent ?? false }, (res) => {
      res.resume();
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, keepAlive: res.headers['keep-alive'] as string | undefined }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

/** The listening socket's backlog as the kernel reports it (`ss`: Send-Q of a listening socket), if `ss` is installed. */
function kernelBacklog(port: number): number | undefined {
  try {
    const out = execFileSync('ss', ['-ltnH', `sport = :${port}`], { encoding: 'utf8' });
    const fields = out.trim().split(/\s+/);
    return fields.length >= 3 ? Number(fields[2]) : undefined;
  } catch {
    return undefined;
  }
}

describe('http server', () => {
  it('advertises the configured keep-alive timeout and keeps an idle connection that long', async () => {
    const config = loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', HTTP_PORT: '0' });
    expect(config.HTTP_KEEPALIVE_TIMEOUT_MS).toBe(65_000);
    http = await listen(app(), config);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const first = await get(`${http.url}/`, agent);
    expect(first).toEqual({ status: 200, keepAlive: 'timeout=65' });
    expect(http.server.headersTimeout).toBeGreaterThan(http.server.keepAliveTimeout);
    // After a pause a default Node server (5 s) would have closed, the same connection is reused.
    let reused = false;
    await new Promise((r) => setTimeout(r, 5_500));
    await new Promise<void>((resolve, reject) => {
      const req = request(`${http!.url}/`, { agent }, (res) => {
        reused = req.reusedSocket;
        res.resume();
        res.on('end', () => resolve());
      });
      req.on('error', reject);
      req.end();
    });
    expect(reused).toBe(true);
    agent.destroy();
  }, 60_000);

  it('takes HTTP_KEEPALIVE_TIMEOUT_MS and HTTP_LISTEN_BACKLOG from the config', async () => {
    const config = loadConfig({
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      HTTP_PORT: '0',
      HTTP_KEEPALIVE_TIMEOUT_MS: '7000',
      HTTP_LISTEN_BACKLOG: '1024',
    });
    http = await listen(app(), config);
    expect((await get(`${http.url}/`)).status).toBe(200);
    expect(http.server.keepAliveTimeout).toBe(7000);
    const backlog = kernelBacklog(Number(new URL(http.url).port));
    if (backlog !== undefined) expect(backlog).toBe(1024); // capped by net.core.somaxconn, 4096 here
  });

  it('answers a burst of 1,000 new connections opened at once', async () => {
    http = await listen(app(), loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', HTTP_PORT: '0' }));
    const answers = await Promise.all(Array.from({ length: 1000 }, () => get(`${http!.url}/`)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1000);
  }, 120_000);
});
