/**
 * What the payment core charges for, per SKU and door: the priced resource
 * (api/payment/paid-route.ts) of a route, one per HTTP method (GET and its
 * POST alias are distinct x402 resources); the MCP door derives its tools'
 * from it (api/mcp/tools.ts).
 */
import { inputJsonSchema } from '../sku/json-schema.js';
import type { HttpMethod, PricedSku } from '../sku/sku.js';
import type { PaidRoute } from '../payment/paid-route.js';

export function paidRouteOf(sku: PricedSku, method: HttpMethod): PaidRoute {
  return {
    method,
    path: sku.path,
    description: sku.description,
    priceAtomic: sku.priceAtomic,
    mimeType: 'application/json',
    inputSchemaJson: inputJsonSchema(sku),
    inputExample: sku.exampleInput,
    outputExample: sku.example,
  };
}
