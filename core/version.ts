/**
 * The service's version: package.json's, read once. /health, discovery, the MCP server and the agent card all
 * say this one value (there is no second copy to keep equal).
 */
import { readFileSync } from 'node:fs';

const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

export const SERVICE_VERSION: string = manifest.version;
