/** The MCP tool name of a catalogue SKU: its id with `_` for `-` (`spread-candles` -> `spread_candles`). */
import type { Sku } from '../sku/sku.js';

export const toolNameOf = (sku: Pick<Sku, 'id'>): string => sku.id.replace(/-/g, '_');
