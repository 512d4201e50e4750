/**
 * The discovery documents as MCP resources: the same documents the HTTP door
 * serves (/agents.md, /openapi.json, /.well-known/mcp.json ...), built by the
 * same functions, each named by its absolute URL.
 */
import type { ReadResourceResult, Resource } from '@modelcontextprotocol/sdk/types.js';
import type { DiscoveryContext } from '../discovery/context.js';
import { JSON_DOCS, TEXT_DOCS, type Build } from '../discovery/mount.js';

interface DocumentResource {
  path: string;
  build: Build;
  mimeType: string;
}

const DOCS: DocumentResource[] = [
  ...TEXT_DOCS.map(([path, build, type]) => ({ path, build, mimeType: type.split(';')[0]! })),
  ...JSON_DOCS.map(([path, build]) => ({ path, build, mimeType: 'application/json' })),
];

export function listResources(ctx: DiscoveryContext): Resource[] {
  return DOCS.map((d) => ({
    uri: `${ctx.baseUrl}${d.path}`,
    name: d.path.replace(/^\/(\.well-known\/)?/, ''),
    title: d.path,
    mimeType: d.mimeType,
  }));
}

/** The document at `uri` (its path on this gateway), or undefined when there is none. */
export function readResource(ctx: DiscoveryContext, uri: string): ReadResourceResult | undefined {
  let path: string;
  try {
    path = new URL(uri, ctx.baseUrl).pathname;
  } catch {
    return undefined;
  }
  const doc = DOCS.find((d) => d.path === path);
  if (!doc) return undefined;
  const built = doc.build(ctx);
  const text = typeof built === 'string' ? built : JSON.stringify(built, null, 2);
  return { contents: [{ uri, mimeType: doc.mimeType, text }] };
}
