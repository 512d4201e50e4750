# Production image: current Node LTS, production dependencies only, compiled JavaScript, non-root.
# The same image runs every role; ROLE picks one (see docker-compose.yml).
# The base is pinned by digest (node 24.18.0 on bookworm-slim, the multi-arch index): a rebuild gets the same bytes;
# move the pin deliberately (docker buildx imagetools inspect node:24-bookworm-slim) when Node or Debian ships fixes.
ARG NODE_IMAGE=node:24-bookworm-slim@sha256:6f7b03f7c2c8e2e784dcf9295400527b9b1270fd37b7e9a7285cf83b6951452d

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

FROM ${NODE_IMAGE} AS check
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
# The production tree (scripts/build-runtime.sh): every module transpiled once here, so a start pays no transpile.
RUN npm run typecheck && npm run lint && npm run build -- /app/runtime

FROM ${NODE_IMAGE} AS runtime
# NODE_ENV=production: a process serving paid routes (ROLE=all or api) refuses to start on the dev chain or
# on anything but USDC on Base; give it SETTLEMENT=remote (FACILITATOR_URL) or self (PAYMENT_SETTLER_KEY,
# PAYMENT_RPC_URL), and PAYMENT_PAY_TO, from the environment.
ENV NODE_ENV=production \
    HTTP_HOST=0.0.0.0 \
    HTTP_PORT=4020 \
    DATA_DIR=/app/data
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
# The compiled roles and operator commands (node scripts/replay.js, node scripts/dlq.js), the SQL migrations, the
# files the code reads beside its modules, and the metric definitions the landing page links to.
COPY --from=check /app/runtime ./
RUN mkdir -p /app/data && chown -R node:node /app/data
USER node
EXPOSE 4020
# Readiness (docs/operations.md): healthy while this process can serve its role; /health's `degraded` is for
# people and monitoring, /livez for a restart policy (an orchestrator restarting on readiness would restart every
# container while a shared engine is away, which brings nothing back).
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.HTTP_PORT||4020)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
STOPSIGNAL SIGTERM
CMD ["node", "--enable-source-maps", "roles/main.js"]
