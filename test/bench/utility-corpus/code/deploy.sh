#!/usr/bin/env bash
# deploy.sh - build the image, push it and roll the service.
#
# Usage: deploy.sh <environment> [tag]
set -euo pipefail

ENVIRONMENT="${1:?usage: deploy.sh <environment> [tag]}"
TAG="${2:-$(git rev-parse --short HEAD)}"   # default: current commit
REGISTRY="registry.example.com/shop"
URL="https://${ENVIRONMENT}.example.com/#health"   # the # here is not a comment

log() { printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

# --- build -------------------------------------------------------------
log "building ${REGISTRY}/api:${TAG}"
docker build --pull -t "${REGISTRY}/api:${TAG}" .   # uses the Dockerfile here

# --- push --------------------------------------------------------------
docker push "${REGISTRY}/api:${TAG}"

# --- roll --------------------------------------------------------------
case "$ENVIRONMENT" in
  staging|production) ;;
  *) log "unknown environment: $ENVIRONMENT"; exit 2 ;;
esac

kubectl --context "$ENVIRONMENT" set image deployment/api api="${REGISTRY}/api:${TAG}"
kubectl --context "$ENVIRONMENT" rollout status deployment/api --timeout=180s

echo "count of #s: ${#TAG}"   # ${#var} is a length, not a comment
for i in 1 2 3; do
  if curl -fsS "$URL" >/dev/null; then   # health check
    log "healthy after $i attempt(s)"
    exit 0
  fi
  sleep 5
done
log "health check failed"; exit 1
