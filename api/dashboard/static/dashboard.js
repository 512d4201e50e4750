/*
 * The landing page's live dashboard (plain browser script, no build step).
 * Polls the free /dashboard/api endpoints every `refreshSeconds` and draws
 * with TradingView's lightweight-charts (global `LightweightCharts`, loaded
 * before this script). When the first data has been drawn, <body> carries
 * data-candles / data-tape / data-latency / data-capacity (point counts) and
 * data-ready="1", and the performance mark `dashboard:first-chart` is set (the
 * benchmark's time to first chart); a failed poll sets data-error.
 */
(function () {
  'use strict';
  const config = JSON.parse(document.getElementById('dashboard-config').textContent);
  const LC = window.LightweightCharts;
  const body = document.body;
  const pairSelect = document.getElementById('pair');
  const updated = document.getElementById('updated');

  const base = {
    autoSize: true,
    layout: { background: { color: '#ffffff' }, textColor: '#1f2937', fontSize: 11 },
    grid: { vertLines: { color: '#eef1f5' }, horzLines: { color: '#eef1f5' } },
    timeScale: { timeVisible: true, secondsVisible: false, borderColor: '#d1d5db' },
    rightPriceScale: { borderColor: '#d1d5db' },
  };

  const candleChart = LC.createChart(document.getElementById('candles'), base);
  const candles = candleChart.addSeries(LC.CandlestickSeries, {
    upColor: '#059669',
    downColor: '#dc2626',
    borderVisible: false,
    wickUpColor: '#059669',
    wickDownColor: '#dc2626',
    priceFormat: { type: 'price', precision: 1, minMove: 0.1 },
  });

  const latencyChart = LC.createChart(document.getElementById('latency'), base);
  const line = (color, title, style) =>
    latencyChart.addSeries(LC.LineSeries, {
      color,
      title,
      lineWidth: 2,
      lineStyle: style,
      priceFormat: { type: 'price', precision: 0, minMove: 1 },
    });
  const latency = {
    cex_p50: line('#2563eb', 'CEX p50', 0),
    cex_p99: line('#93c5fd', 'CEX p99', 2),
    dex_p50: line('#d97706', 'Base p50', 0),
    dex_p99: line('#fcd34d', 'Base p99', 2),
  };

  const capacityChart = LC.createChart(document.getElementById('capacity'), base);
  const capacity = capacityChart.addSeries(LC.HistogramSeries, { color: '#7c3aed', priceFormat: { type: 'volume' } });

  const tapeBody = document.querySelector('#tape tbody');
  const fmt = new Intl.NumberFormat('en-US');

  function renderTape(items) {
    const rows = items.map((d) => {
      const tr = document.createElement('tr');
      const cells = [
        d.time.slice(11, 19),
        d.pair,
        d.direction,
        d.net_spread_bps.toFixed(1),
        fmt.format(d.est_profit_usd),
        fmt.format(d.liquidity_depth_usd),
      ];
      cells.forEach((text, i) => {
        const td = document.createElement('td');
        td.textContent = text;
        if (i >= 3) td.className = 'num';
        if (i === 3) td.classList.add(d.net_spread_bps > 0 ? 'pos' : 'neg');
        tr.appendChild(td);
      });
      return tr;
    });
    tapeBody.replaceChildren(...rows);
  }

  function renderHealth(overview) {
    const box = document.getElementById('health');
    const badges = [['overall', overview.status]].concat(
      Object.entries(overview.components).map(([name, c]) => [name, c.status]),
    );
    box.replaceChildren(
      ...badges.map(([name, status]) => {
        const span = document.createElement('span');
        span.className = `badge ${status}`;
        span.textContent = `${name}: ${status}`;
        const reason = overview.components[name] && overview.components[name].reason;
        if (reason) span.title = reason;
        return span;
      }),
    );
  }

  async function getJson(path) {
    const res = await fetch(path, { headers: { accept: 'application/json' } });
    if (!res.ok) throw new Error(`${path}: HTTP ${res.status}`);
    return res.json();
  }

  let first = true;
  async function refresh() {
    const pair = pairSelect.value;
    try {
      const [overview, market] = await Promise.all([
        getJson('/dashboard/api/overview'),
        getJson(`/dashboard/api/market?pair=${encodeURIComponent(pair)}`),
      ]);
      if (pair !== pairSelect.value) return; // the selection changed meanwhile
      renderHealth(overview);
      candles.setData(market.candles.points);
      latency.cex_p50.setData(market.latency.cex_rest.map((p) => ({ time: p.time, value: p.p50_ms })));
      latency.cex_p99.setData(market.latency.cex_rest.map((p) => ({ time: p.time, value: p.p99_ms })));
      latency.dex_p50.setData(market.latency.dex_rpc.map((p) => ({ time: p.time, value: p.p50_ms })));
      latency.dex_p99.setData(market.latency.dex_rpc.map((p) => ({ time: p.time, value: p.p99_ms })));
      capacity.setData(market.capacity.map((p) => ({ time: p.time, value: p.available_volume_usd })));
      renderTape(market.tape);
      if (first) {
        for (const chart of [candleChart, latencyChart, capacityChart]) chart.timeScale().fitContent();
      }
      updated.textContent = `data to ${market.window.to.slice(11, 19)} UTC · updated ${new Date().toLocaleTimeString()}`;
      requestAnimationFrame(() => {
        body.dataset.candles = String(market.candles.points.length);
        body.dataset.tape = String(market.tape.length);
        body.dataset.latency = String(market.latency.cex_rest.length + market.latency.dex_rpc.length);
        body.dataset.capacity = String(market.capacity.length);
        body.dataset.pair = pair;
        if (body.dataset.ready !== '1') performance.mark('dashboard:first-chart');
        body.dataset.ready = '1';
        delete body.dataset.error;
      });
      first = false;
    } catch (err) {
      body.dataset.error = String(err && err.message ? err.message : err);
      updated.textContent = `update failed: ${body.dataset.error}; retrying`;
    }
  }

  pairSelect.addEventListener('change', () => {
    first = true;
    refresh();
  });
  refresh();
  setInterval(refresh, Math.max(2, config.refreshSeconds) * 1000);
})();
