/** One line of a benchmark table: a figure, and its ratio to a baseline measured in the same run. */
export interface BenchRow {
  port: string;
  adapter: string;
  workload: string;
  /** Items per second through the adapter. */
  throughput: number;
  unit: string;
  /** Items per second of the raw client doing the same work in the same run (absent for embedded adapters). */
  baseline?: number;
  baselineName?: string;
}

export function printTable(title: string, rows: BenchRow[]): void {
  console.log(`\n${title}`);
  console.log('| port | adapter | workload | throughput | baseline (raw client) | adapter/raw | overhead |');
  console.log('|---|---|---|---|---|---|---|');
  for (const r of rows) {
    const ratio = r.baseline ? r.throughput / r.baseline : undefined;
    console.log(
      `| ${r.port} | ${r.adapter} | ${r.workload} | ${fmt(r.throughput)} ${r.unit} | ${r.baseline ? `${fmt(r.baseline)} ${r.unit} (${r.baselineName})` : 'n/a'} | ${ratio ? ratio.toFixed(2) : 'n/a'} | ${ratio ? `${((1 / ratio - 1) * 100).toFixed(1)}%` : 'n/a'} |`,
    );
  }
}

const fmt = (n: number) => (n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(1));
