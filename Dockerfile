# Production image: current Node LTS, production dependencies only, non-root.
# The same image runs every role; ROLE picks one (see docker-compose.yml).

FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:24-bookworm-slim AS check
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run typecheck && npm run lint

FROM node:24-bookworm-slim AS runtime
# NODE_ENV=production: a process serving paid routes (ROLE=all or api) refuses to start on the dev chain or
# on anything but USDC on Base; give it SETTLEMENT=remote (FACILITATOR_URL) or self (PAYMENT_SETTLER_KEY,
# PAYMENT_RPC_URL), and PAYMENT_PAY_TO, from the environment.
ENV NODE_ENV=production \
    HTTP_HOST=0.0.0.0 \
    HTTP_PORT=4020 \
    DATA_DIR=/app/data
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=check /app/package.json ./
COPY --from=check /app/core ./core
COPY --from=check /app/roles ./roles
COPY --from=check /app/api ./api
COPY --from=check /app/ingest ./ingest
COPY --from=check /app/aggregate ./aggregate
COPY --from=check /app/jobs ./jobs
COPY --from=check /app/sql ./sql
# The metric definitions the landing page links to (api/dashboard/mount.ts).
COPY --from=check /app/docs/metrics.md ./docs/metrics.md
RUN mkdir -p /app/data && chown -R node:node /app/data
USER node
EXPOSE 4020
# Readiness (docs/operations.md): healthy while this process can serve its role; /health's `degraded` is for
# people and monitoring, /livez for a restart policy (an orchestrator restarting on readiness would restart every
# container while a shared engine is away, which brings nothing back).
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.HTTP_PORT||4020)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
STOPSIGNAL SIGTERM
CMD ["node", "--import", "tsx", "roles/main.ts"]
