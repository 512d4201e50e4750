#!/usr/bin/env bash
# `npm test`: every stage runs and reports, even when an earlier one failed (a red unit test must not hide the
# e2e results); the exit status is non-zero when any stage failed, and the last line names them.
set -uo pipefail
cd "$(dirname "$0")/.."

failed=()
stage() {
  local name=$1
  shift
  echo "::: $name"
  local t0=$SECONDS
  if "$@"; then
    echo "::: $name: passed in $((SECONDS - t0)) s"
  else
    echo "::: $name: FAILED (exit $?) in $((SECONDS - t0)) s"
    failed+=("$name")
  fi
}

stage typecheck npm run --silent typecheck
stage lint npm run --silent lint
stage config-docs npm run --silent config:docs -- --check
# test/replicated needs the replicated topology (ENGINES_TOPOLOGY=replicated): .ci/run runs it after this.
stage 'vitest: unit, contract, integration' npx vitest run --exclude 'test/e2e/**' --exclude 'test/replicated/**'
# The e2e suites start whole processes and engines' clients of their own: one file at a time.
stage 'vitest: e2e' npm run --silent test:e2e

if ((${#failed[@]})); then
  echo "::: npm test failed: ${failed[*]}"
  exit 1
fi
echo '::: npm test passed: every stage'
