/**
 * A small web site on 127.0.0.1 for the fetcher, stealth-dom and OCR tests:
 * a news article wrapped in the usual navigation, cookie banner, ads, sidebar
 * and footer; text, JSON and binary answers; charsets; gzip; redirects
 * (chains, loops, to any URL); bodies larger than any cap (streamed or
 * declared); slow headers and slow bodies; pages with any status. Every
 * request is recorded (path, headers) and every connection counted, so a test
 * can prove a refused URL never reached the server and that an oversized body
 * was abandoned early.
 */
import { once } from 'node:events';
import http from 'node:http';
import net, { type AddressInfo, type Socket } from 'node:net';
import zlib from 'node:zlib';

export interface RecordedRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
}

export type RouteHandler = (req: http.IncomingMessage, res: http.ServerResponse, url: URL) => void | Promise<void>;

export interface WebFixtures {
  origin: string;
  port: number;
  url(path: string): string;
  requests: RecordedRequest[];
  /** TCP connections accepted so far. */
  connections(): number;
  /** Bytes written by /big before the client went away. */
  bigBytesSent(): number;
  route(path: string, handler: RouteHandler): void;
  close(): Promise<void>;
}

/**
 * The fetcher's `connect` seam for tests: opens real TCP connections to loopback targets only and
 * refuses anything else, so even a policy regression can never send a packet off this machine.
 * Every target asked for is recorded.
 */
export function loopbackOnlyNetwork(attempts: string[] = []) {
  return (target: { address: string; port: number }) => {
    attempts.push(`${target.address}:${target.port}`);
    if (target.address !== '127.0.0.1' && target.address !== '::1') {
      throw Object.assign(new Error(`test network: refusing to connect to ${target.address}`), {
        code: 'ETESTNETWORK',
      });
    }
    return net.connect({ host: target.address, port: target.port });
  };
}

export const ARTICLE_TITLE = 'Dredging the Maasgeul: how Rotterdam keeps its channel open';

/** A realistic news page: the article is a minority of the markup. */
export function articleHtml(options: { paragraphs?: number; charsetMeta?: string } = {}): string {
  const extra = Array.from(
    { length: options.paragraphs ?? 0 },
    (_, i) =>
      `<p>Survey run ${i + 1} measured the channel floor at ${(24 - (i % 5) * 0.1).toFixed(1)} metres along transect ${String.fromCharCode(65 + (i % 26))}, ` +
      `and the crew logged sediment samples, water temperature and the tidal phase for the harbour master's weekly report on navigability.</p>`,
  ).join('\n');
  return `<!DOCTYPE html>
<html lang="en">
<head>
  ${options.charsetMeta ? `<meta charset="${options.charsetMeta}">` : '<meta charset="utf-8">'}
  <title>${ARTICLE_TITLE} | Harbour Gazette</title>
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <link rel="stylesheet" href="/static/site.css">
  <script type="application/ld+json">{"@context":"https://schema.org","@type":"NewsArticle","headline":"${ARTICLE_TITLE}"}</script>
  <script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments)}gtag('js',new Date());gtag('config','G-TRACKER1');</script>
  <style>.ad{border:1px solid #ccc}.cookie{position:fixed;bottom:0}</style>
</head>
<body>
  <div class="cookie-banner" id="cookie-consent">We use cookies to improve your experience. <button>Accept cookies</button> <a href="/privacy">Manage preferences</a></div>
  <header class="site-header">
    <a class="logo" href="/">Harbour Gazette</a>
    <nav class="main-nav" role="navigation">
      <ul><li><a href="/">Home</a></li><li><a href="/shipping">Shipping</a></li><li><a href="/ports">Ports</a></li><li><a href="/opinion">Opinion</a></li><li><a href="/subscribe">Subscribe now</a></li></ul>
    </nav>
  </header>
  <div class="ad ad-leaderboard" id="ad-top"><a href="https://ads.example.net/click?id=991">Cheap container insurance - get a quote in 60 seconds!</a></div>
  <main>
    <article class="story">
      <h1>${ARTICLE_TITLE}</h1>
      <p class="byline">By Marieke de Vries, maritime correspondent</p>
      <p>The Port of Rotterdam handled 438 million tonnes of cargo last year, and almost all of it came in through the Maasgeul, the dredged approach channel that runs some fifty kilometres out into the North Sea. Without constant maintenance the channel would silt up within a few seasons.</p>
      <p>Harbour pilots board incoming vessels far offshore and guide them along the channel in every kind of weather. The deepest-draught ships, ore carriers bound for the Europoort terminals, need a clear depth of more than twenty-two metres at low water.</p>
      <figure><img src="/img/dredger.jpg" alt="A trailing suction hopper dredger at work"><figcaption>A trailing suction hopper dredger in the Maasgeul.</figcaption></figure>
      <h2>Dredging around the clock</h2>
      <p>Trailing suction hopper dredgers work day and night, moving the sand and silt that the tides push back into the channel. Their crews map the seabed with multibeam echo sounders and <a href="/ports/rotterdam/depths">publish the surveyed depths</a> every week.</p>
      <blockquote><p>Every tide brings the sea floor a little closer to the keel; our job is to take it away again.</p></blockquote>
      <h2>What the work involves</h2>
      <ul>
        <li>Surveying the channel floor with echo sounders</li>
        <li>Dredging shoals before they limit the draught</li>
        <li>Depositing the sediment at licensed sites offshore</li>
      </ul>
      <p>The port authority expects the volume to grow as ships get larger, and has asked the dredging contractors to plan for a deeper channel by the end of the decade.</p>
      ${extra}
    </article>
    <aside class="sidebar">
      <h3>Most read</h3>
      <ol><li><a href="/a/1">Ten ships you will see this week</a></li><li><a href="/a/2">Opinion: the case for shore power</a></li></ol>
      <div class="ad ad-sidebar">Advertisement: Sail the fjords this summer - 20% off!</div>
    </aside>
  </main>
  <section class="newsletter"><h3>Newsletter</h3><form action="/subscribe"><input name="email" placeholder="you@example.com"><button>Sign me up</button></form></section>
  <footer class="site-footer"><p>Copyright 2025 Harbour Gazette Media B.V. All rights reserved.</p><a href="/privacy">Privacy policy</a> <a href="/terms">Terms</a></footer>
  <script src="/static/tracker.js"></script>
  <script>document.getElementById('cookie-consent').onclick=function(){this.remove()}</script>
</body>
</html>`;
}

function errorPage(status: number): string {
  const reason = http.STATUS_CODES[status] ?? 'Error';
  return `<!DOCTYPE html><html><head><title>${status} ${reason} | Harbour Gazette</title></head><body><header><nav><a href="/">Home</a></nav></header><main><h1>${status} ${reason}</h1><p>Sorry, the page you were looking for could not be served. It may have moved, or the link you followed may be out of date. Try the search box or start again from the home page of the Harbour Gazette.</p></main><footer>Harbour Gazette</footer></body></html>`;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startWebFixtures(): Promise<WebFixtures> {
  const requests: RecordedRequest[] = [];
  const extraRoutes = new Map<string, RouteHandler>();
  let connections = 0;
  let bigBytes = 0;
  const sockets = new Set<Socket>();

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://fixture.invalid');
    requests.push({ path: url.pathname + url.search, headers: req.headers });
    const html = (body: string, status = 200, type = 'text/html; charset=utf-8') => {
      res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
      res.end(body);
    };
    const custom = extraRoutes.get(url.pathname);
    if (custom) return void (await custom(req, res, url));
    const p = url.pathname;
    switch (true) {
      case p === '/article':
        return html(articleHtml());
      case p === '/long-article':
        return html(articleHtml({ paragraphs: 80 }));
      case p === '/article.gz': {
        const body = zlib.gzipSync(articleHtml());
        res.writeHead(200, {
          'content-type': 'text/html; charset=utf-8',
          'content-encoding': 'gzip',
          'content-length': body.length,
        });
        return void res.end(body);
      }
      case p === '/article.br': {
        const body = zlib.brotliCompressSync(articleHtml());
        res.writeHead(200, {
          'content-type': 'text/html; charset=utf-8',
          'content-encoding': 'br',
          'content-length': body.length,
        });
        return void res.end(body);
      }
      case p === '/latin1': {
        const body = Buffer.from(articleHtml().replace('Marieke de Vries', 'Zoë Léonard-Müller'), 'latin1');
        res.writeHead(200, { 'content-type': 'text/html; charset=ISO-8859-1', 'content-length': body.length });
        return void res.end(body);
      }
      case p === '/meta-charset': {
        const body = Buffer.from(
          articleHtml({ charsetMeta: 'windows-1252' }).replace('Marieke de Vries', 'Zoë Léonard-Müller'),
          'latin1',
        );
        res.writeHead(200, { 'content-type': 'text/html', 'content-length': body.length });
        return void res.end(body);
      }
      case p === '/notes.txt':
        return html(
          'Tide table notes\n\nHigh water 06:12, low water 12:31.\nPilot boarding at Maas Center.\n',
          200,
          'text/plain; charset=utf-8',
        );
      case p === '/data.json':
        return html(
          '{"port":"Rotterdam","tonnes":438000000,"channel":{"name":"Maasgeul","depth_m":24}}',
          200,
          'application/json',
        );
      case p === '/untyped-html': {
        const body = Buffer.from(articleHtml());
        res.writeHead(200, { 'content-length': body.length });
        return void res.end(body);
      }
      case p === '/untyped-binary': {
        const body = Buffer.from([
          0x50,
          0x4b,
          0x03,
          0x04,
          0x14,
          0x00,
          0x00,
          0x00,
          0x08,
          0x00,
          ...Buffer.from('word/document.xml'),
        ]);
        res.writeHead(200, { 'content-length': body.length });
        return void res.end(body);
      }
      case p === '/report.pdf': {
        const body = Buffer.from(
          '%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n',
          'latin1',
        );
        res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': body.length });
        return void res.end(body);
      }
      case p === '/photo.jpg': {
        res.writeHead(200, { 'content-type': 'image/jpeg' });
        return void res.end(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46]));
      }
      case p === '/echo-ua':
        return html(
          `<!DOCTYPE html><html><head><title>Request inspector</title></head><body><main><article><h1>Request inspector</h1><p>Your browser identifies itself as: <code>${String(req.headers['user-agent'] ?? '').replace(/</g, '&lt;')}</code>. This page echoes the User-Agent header so that you can check what a client sends when it fetches a page from this site.</p><p>Accept: ${String(req.headers.accept ?? '')}</p></article></main></body></html>`,
        );
      case p.startsWith('/status/'): {
        const status = Number(p.slice('/status/'.length));
        return html(errorPage(status), status);
      }
      case p === '/redirect': {
        res.writeHead(Number(url.searchParams.get('status') ?? 302), {
          location: url.searchParams.get('to') ?? '/article',
        });
        return void res.end();
      }
      case p.startsWith('/chain/'): {
        const n = Number(p.slice('/chain/'.length));
        res.writeHead(n % 2 ? 301 : 307, { location: n > 0 ? `/chain/${n - 1}` : '/article' });
        return void res.end();
      }
      case p === '/loop':
        res.writeHead(302, { location: '/loop' });
        return void res.end();
      case p === '/big': {
        // Endless HTML without Content-Length: the client must stop reading at its cap.
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.write('<!DOCTYPE html><html><head><title>Big</title></head><body>');
        const chunk = `<p>${'Harbour data row. '.repeat(55)}</p>\n`;
        let open = true;
        res.on('close', () => (open = false));
        for (let i = 0; i < 20_000 && open; i++) {
          if (!res.write(chunk)) await once(res, 'drain').catch(() => {});
          bigBytes += chunk.length;
        }
        return void res.end('</body></html>');
      }
      case p === '/big-declared':
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': 500 * 1024 * 1024 });
        return void res.write('<!DOCTYPE html><html><body>');
      case p === '/gzip-bomb': {
        // 64 MiB of HTML in about 64 KiB of gzip.
        const body = zlib.gzipSync(
          Buffer.concat([Buffer.from('<!DOCTYPE html><html><body><p>'), Buffer.alloc(64 * 1024 * 1024, 0x61)]),
          { level: 9 },
        );
        res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip', 'content-length': body.length });
        return void res.end(body);
      }
      case p === '/slow-headers':
        await sleep(Number(url.searchParams.get('ms') ?? 3000));
        return html(articleHtml());
      case p === '/slow-body': {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.write('<!DOCTYPE html><html><head><title>Slow</title></head><body><p>first part');
        await sleep(Number(url.searchParams.get('ms') ?? 3000));
        return void res.end('</p></body></html>');
      }
      default:
        return html(errorPage(404), 404);
    }
  });
  server.on('connection', (socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;
  return {
    origin,
    port,
    url: (path) => `${origin}${path}`,
    requests,
    connections: () => connections,
    bigBytesSent: () => bigBytes,
    route: (path, handler) => void extraRoutes.set(path, handler),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, 'close').catch(() => {});
    },
  };
}
