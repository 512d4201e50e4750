/*
 * The landing page's live dashboard (plain browser script, no build step).
 * Polls the free /dashboard/api endpoints every `refreshSeconds` and draws
 * with TradingView's lightweight-charts (global `LightweightCharts`, loaded
 * before this script).
 *
 *   - Each panel is drawn on its own: a failed or refused poll leaves the
 *     others (and its own last drawing) in place and says so in its summary.
 *   - A 429 is honoured: no poll until its Retry-After has passed.
 *   - Every chart has a text summary (what a screen reader reads, and what a
 *     viewer sees before the first hour closes: what is coming and when).
 *   - Charts re-fit whenever their number of points changes.
 *   - "data to" is the newest sample's event time from the data, not the clock.
 *
 * When the first data has been drawn, <body> carries data-spread / data-tape /
 * data-latency (point counts), data-pair and data-ready="1", and the
 * performance mark `dashboard:first-chart` is set (the benchmark's time to
 * first chart); a failed poll sets data-error.
 */
(function () {
  'use strict';
  document.documentElement.classList.add('js'); // shows the .js-only parts (dashboard.css)
  const config = JSON.parse(document.getElementById('dashboard-config').textContent);
  const LC = window.LightweightCharts;
  const body = document.body;
  const pairSelect = document.getElementById('pair');
  const updated = document.getElementById('updated');
  const $ = (id) => document.getElementById(id);

  const base = {
    autoSize: true,
    layout: { background: { color: '#ffffff' }, textColor: '#1f2937', fontSize: 11, attributionLogo: false },
    grid: { vertLines: { color: '#eef1f5' }, horzLines: { color: '#eef1f5' } },
    timeScale: { timeVisible: true, secondsVisible: false, borderColor: '#d1d5db' },
    rightPriceScale: { borderColor: '#d1d5db' },
  };
  const CLOSED = '#1d4ed8';
  const OPEN = '#9ca3af';

  const spreadChart = LC.createChart($('spread'), base);
  const spread = spreadChart.addSeries(LC.HistogramSeries, {
    color: CLOSED,
    priceFormat: { type: 'price', precision: 1, minMove: 0.5 },
  });
  const latencyChart = LC.createChart($('latency'), base);
  const line = (color, title) =>
    latencyChart.addSeries(LC.LineSeries, {
      color,
      title,
      lineWidth: 2,
      priceFormat: { type: 'price', precision: 0, minMove: 1 },
    });
  const latency = { cex: line('#1d4ed8', 'CEX REST'), dex: line('#b45309', 'Base RPC') };
  const fitted = { spread: -1, latency: -1 };

  const hhmm = (iso) => iso.slice(11, 16);
  const fmtBp = (v) => `${v > 0 ? '+' : ''}${v.toFixed(1)} bp`;

  function drawSpread(m) {
    const points = m.spread.points;
    spread.setData(
      points.map((p) => ({ time: p.time, value: p.median_raw_spread_bps, color: p.open ? OPEN : CLOSED })),
    );
    if (points.length !== fitted.spread) spreadChart.timeScale().fitContent();
    fitted.spread = points.length;
    const closed = points.filter((p) => !p.open);
    const open = points.find((p) => p.open);
    const next = hhmm(m.spread.next_close_at);
    const parts = [];
    if (!points.length) {
      parts.push(
        `No spread samples of ${m.spread.pair} yet in the last hours. The first hourly bar appears with the first sample (${m.window.delay_seconds} s late) and is final at ${next} UTC.`,
      );
    } else if (!closed.length) {
      parts.push(
        `No hour has closed yet: the grey bar is the open hour so far (median ${fmtBp(open.median_raw_spread_bps)}); it is final at ${next} UTC.`,
      );
    } else {
      const last = closed[closed.length - 1];
      const values = closed.map((p) => p.median_raw_spread_bps);
      parts.push(
        `${closed.length} closed hour${closed.length > 1 ? 's' : ''}: last median ${fmtBp(last.median_raw_spread_bps)} (hour from ${new Date(last.time * 1000).toISOString().slice(11, 16)} UTC), range ${fmtBp(Math.min(...values))} to ${fmtBp(Math.max(...values))}.`,
      );
      if (open) parts.push(`Open hour so far (grey): ${fmtBp(open.median_raw_spread_bps)}, final at ${next} UTC.`);
    }
    $('spread-summary').textContent = parts.join(' ');
  }

  function drawLatency(m) {
    const toLine = (points) => points.map((p) => ({ time: p.time, value: p.median_ms }));
    latency.cex.setData(toLine(m.latency.cex_rest));
    latency.dex.setData(toLine(m.latency.dex_rpc));
    const n = m.latency.cex_rest.length + m.latency.dex_rpc.length;
    if (n !== fitted.latency) latencyChart.timeScale().fitContent();
    fitted.latency = n;
    const last = (points, name) =>
      points.length ? `${name} ${points[points.length - 1].median_ms} ms` : `${name}: no closed hour yet`;
    $('latency-summary').textContent = n
      ? `Last closed hour: ${last(m.latency.cex_rest, 'CEX REST')}, ${last(m.latency.dex_rpc, 'Base RPC')} (medians).`
      : `No hour has closed yet: the first hourly medians appear at ${hhmm(m.spread.next_close_at)} UTC.`;
  }

  function drawTape(m) {
    const rows = m.tape.items.map((d) => {
      const tr = document.createElement('tr');
      [hhmm(d.time), d.direction, d.net_spread_band_bps].forEach((text, i) => {
        const td = document.createElement('td');
        td.textContent = text;
        if (i === 2) td.className = `num ${d.net_spread_band_bps === '<0' ? 'neg' : 'pos'}`;
        tr.appendChild(td);
      });
      return tr;
    });
    $('tape')
      .querySelector('tbody')
      .replaceChildren(...rows);
    const hours = Math.round(m.tape.delay_seconds / 360) / 10;
    $('tape-summary').textContent = rows.length
      ? `${rows.length} dislocation${rows.length > 1 ? 's' : ''} of ${m.tape.pair} opened more than ${hours} h ago; the newest at ${hhmm(m.tape.items[0].time)} UTC.`
      : `No dislocation of ${m.tape.pair} opened more than ${hours} h ago in the window yet. The tape shows each one ${hours} h after it opened; fresh ones are the paid dislocations route.`;
  }

  function drawHealth(overview) {
    const status = $('health-status');
    status.className = `badge ${overview.status}`;
    const notOk = Object.entries(overview.components).filter(([, c]) => c.status !== 'ok');
    status.textContent = `status: ${overview.status}${notOk.length ? ` (${notOk.length} component${notOk.length > 1 ? 's' : ''} not ok)` : ''}`;
    $('health-components').replaceChildren(
      ...Object.entries(overview.components).map(([name, c]) => {
        const li = document.createElement('li');
        li.textContent = `${name}: ${c.status}${c.reason ? ` (${c.reason})` : ''}`;
        return li;
      }),
    );
  }

  function drawTrackRecord(overview) {
    const t = overview.track_record;
    const usdc = new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
    $('track-record').textContent =
      `Track record of ${t.scope} (${t.since.slice(0, 16).replace('T', ' ')} UTC): ` +
      `${t.paid_calls} paid call${t.paid_calls === 1 ? '' : 's'} served, ` +
      `${t.distinct_payers_at_least ? 'at least ' : ''}${t.distinct_payers} distinct payer${t.distinct_payers === 1 ? '' : 's'}, ` +
      `${usdc.format(t.settled_usdc)} USDC settled.`;
  }

  /** Rejects with { status, retryAfterS } on an HTTP error. */
  async function getJson(path) {
    const res = await fetch(path, { headers: { accept: 'application/json' } });
    if (!res.ok) {
      const err = new Error(`${path}: HTTP ${res.status}`);
      err.status = res.status;
      err.retryAfterS = Number(res.headers.get('retry-after')) || undefined;
      throw err;
    }
    return res.json();
  }

  let pausedUntil = 0;
  function noteFailure(err, summaryIds) {
    const message = String(err && err.message ? err.message : err);
    body.dataset.error = message;
    if (err && err.status === 429) {
      const waitS = err.retryAfterS || 60;
      pausedUntil = Math.max(pausedUntil, Date.now() + waitS * 1000);
      updated.textContent = `busy: next update in ${waitS} s`;
    } else {
      updated.textContent = 'update failed; retrying';
    }
    for (const id of summaryIds) {
      const el = $(id);
      if (!/not updated/.test(el.textContent)) el.textContent += ' (not updated: the last update failed; retrying.)';
    }
  }

  async function refreshOverview() {
    try {
      const overview = await getJson('/dashboard/api/overview');
      drawHealth(overview);
      drawTrackRecord(overview);
    } catch (err) {
      noteFailure(err, []);
      $('health-status').textContent = 'status: unknown (update failed)';
    }
  }

  async function refreshMarket() {
    const pair = pairSelect.value;
    let market;
    try {
      market = await getJson(`/dashboard/api/market?pair=${encodeURIComponent(pair)}`);
    } catch (err) {
      noteFailure(err, ['spread-summary', 'latency-summary', 'tape-summary']);
      return;
    }
    if (pair !== pairSelect.value) return; // the selection changed meanwhile
    for (const el of document.querySelectorAll('.pair-name')) el.textContent = pair;
    // One panel failing to draw leaves the others drawn.
    for (const [draw, id] of [
      [drawSpread, 'spread-summary'],
      [drawLatency, 'latency-summary'],
      [drawTape, 'tape-summary'],
    ]) {
      try {
        draw(market);
      } catch (err) {
        $(id).textContent = `This panel could not be drawn (${err && err.message ? err.message : err}).`;
      }
    }
    updated.textContent = market.window.data_to ? `data to ${market.window.data_to.slice(11, 19)} UTC` : 'no data yet';
    requestAnimationFrame(() => {
      body.dataset.spread = String(market.spread.points.length);
      body.dataset.tape = String(market.tape.items.length);
      body.dataset.latency = String(market.latency.cex_rest.length + market.latency.dex_rpc.length);
      body.dataset.pair = pair;
      if (body.dataset.ready !== '1') performance.mark('dashboard:first-chart');
      body.dataset.ready = '1';
      delete body.dataset.error;
    });
  }

  function refresh() {
    if (Date.now() < pausedUntil) return;
    refreshOverview();
    refreshMarket();
  }

  pairSelect.addEventListener('change', () => {
    fitted.spread = -1;
    fitted.latency = -1;
    if (Date.now() >= pausedUntil) refreshMarket();
  });
  refresh();
  setInterval(refresh, Math.max(2, config.refreshSeconds) * 1000);
})();
