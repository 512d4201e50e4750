#!/usr/bin/env bash
# `npm run build [-- OUT]`: the production tree (default dist/), what the image runs with plain `node` (no
# TypeScript loader at start-up, so a restart pays no transpile). Every module of the roles and operator commands is transpiled on its
# own by esbuild into the source layout (the same transform tsx applies at run time today, so behaviour does not
# change; types are checked by `npm run typecheck`), and the files the code reads beside its modules are copied
# to the same relative places: SQL migrations, data files, browser assets, the thread entry, package.json (the
# version) and docs/metrics.md (linked from the landing page). node_modules is not part of it: install the
# production dependencies beside it (`npm ci --omit=dev`).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-$root/dist}" && cd "${1:-$root/dist}" && pwd)
cd "$root"
rm -rf "${out:?}"/{core,roles,api,ingest,aggregate,jobs,scripts,sql,docs}
folders=(core roles api ingest aggregate jobs)

# The operators' commands ship too (`node scripts/replay.js ...`, `node scripts/dlq.js ...`: docs/operations.md).
operator_commands=(scripts/replay.ts scripts/dlq.ts scripts/operator-config.ts)
mapfile -t modules < <(find "${folders[@]}" -name '*.ts' ! -name '*.d.ts' | sort)
modules+=("${operator_commands[@]}")
npx esbuild "${modules[@]}" --outdir="$out" --outbase=. --format=esm --platform=node --target=node22 \
  --sourcemap --log-level=warning

# Beside the modules: everything in those folders that is neither TypeScript nor documentation nor a contract's
# source (the compiled contract's JSON is read at run time).
find "${folders[@]}" -type f ! -name '*.ts' ! -name '*.md' ! -name '*.sol' -print0 |
  xargs -0 -I{} cp --parents {} "$out"
cp -r sql "$out/sql"
mkdir -p "$out/docs" && cp docs/metrics.md "$out/docs/metrics.md"
cp package.json "$out/package.json"
echo "build: ${#modules[@]} modules into $out"
