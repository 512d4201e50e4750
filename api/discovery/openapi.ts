/**
 * GET /openapi.json: OpenAPI 3.1 generated from the catalogue's zod schemas
 * (zod 4's own JSON Schema output, draft 2020-12, the dialect of OAS 3.1).
 * The x402 payment is declared as the security scheme `payment-required`
 * (apiKey in the `PAYMENT-SIGNATURE` header; the 402 answer carries the
 * `PAYMENT-REQUIRED` challenge header). Every operation lists its input
 * (query parameters or JSON body) and output schemas, and the 400, 402, 404,
 * 503 and 5XX answers with the problem schema.
 */
import { inputJsonSchema, jsonSchemaOf, outputJsonSchema, type JsonSchema } from '../sku/json-schema.js';
import { ProblemSchema, ZERO_CHARGE_TEXT, priceText } from '../sku/schemas.js';
import type { HttpMethod, PricedSku } from '../sku/sku.js';
import { DEFAULT_BODY_LIMIT } from '../middleware/json-body.js';
import {
  DOCUMENTS,
  MAX_PRICE_USD,
  MIN_PRICE_USD,
  SERVICE_NAME,
  SERVICE_SUMMARY,
  SERVICE_VERSION,
  methodsOf,
  paymentNetwork,
  pricing,
  type DiscoveryContext,
  exampleInputOf,
} from './context.js';

const pascal = (id: string) => id.replace(/(^|-)([a-z0-9])/g, (_, __, c: string) => c.toUpperCase());
const camel = (id: string) => id.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
const json = (schema: JsonSchema, example?: unknown) => ({
  'application/json': { schema, ...(example === undefined ? {} : { example }) },
});
const problemRef = { $ref: '#/components/schemas/Problem' };
const problemContent = (example?: Record<string, unknown>) => ({
  'application/problem+json': { schema: problemRef, ...(example ? { example } : {}) },
});

export function buildOpenApi(ctx: DiscoveryContext) {
  const schemas: Record<string, JsonSchema> = { Problem: jsonSchemaOf(ProblemSchema, 'output') };
  const paths: Record<string, Record<string, unknown>> = {};
  const network = paymentNetwork(ctx.payment);

  for (const sku of ctx.catalogue.skus) {
    const name = pascal(sku.id);
    schemas[`${name}Request`] = inputJsonSchema(sku);
    schemas[`${name}Response`] = outputJsonSchema(sku);
    const item: Record<string, unknown> = (paths[sku.path] ??= {});
    for (const method of methodsOf(sku) as HttpMethod[])
      item[method.toLowerCase()] = operation(sku, method, name, network.name, exampleInputOf(ctx, sku));
  }

  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    info: {
      title: SERVICE_NAME,
      version: SERVICE_VERSION,
      description: `${SERVICE_SUMMARY}\n\nPaid routes answer 402 with a \`PAYMENT-REQUIRED\` challenge; retry with \`PAYMENT-SIGNATURE\` (x402 v2, scheme \`exact\`, ${ctx.payment.network}, USDC ${ctx.payment.asset}). Prices per call: ${MIN_PRICE_USD}-${MAX_PRICE_USD} USD; the authoritative current prices are in ${DOCUMENTS.discovery} and each challenge. Only 200 responses are settled.`,
    },
    servers: [{ url: ctx.baseUrl }],
    tags: [...new Set(ctx.catalogue.skus.flatMap((s) => s.categories))].map((name) => ({ name })),
    security: [],
    paths,
    components: {
      schemas,
      securitySchemes: {
        'payment-required': {
          type: 'apiKey',
          in: 'header',
          name: 'PAYMENT-SIGNATURE',
          description:
            'x402 v2 payment. A request without it gets 402 with a base64 JSON `PAYMENT-REQUIRED` header (accepts[0]: scheme, network, amount in atomic USDC, asset, payTo, maxTimeoutSeconds, extra {name, version}); sign an EIP-3009 transferWithAuthorization for that amount and send it base64-encoded in `PAYMENT-SIGNATURE`.',
        },
      },
      headers: {
        'PAYMENT-REQUIRED': {
          description: 'Base64 JSON x402 payment requirements (x402Version 2, error, resource, accepts[])',
          schema: { type: 'string' },
        },
        'PAYMENT-RESPONSE': {
          description: 'Base64 JSON x402 settlement response (success, transaction, network, payer)',
          schema: { type: 'string' },
        },
      },
    },
    'x-x402': {
      x402Version: 2,
      network: ctx.payment.network,
      asset: ctx.payment.asset,
      payTo: ctx.payment.payTo,
      maxTimeoutSeconds: ctx.payment.maxTimeoutSeconds,
      paymentNetwork: network,
    },
  };
}

function operation(
  sku: PricedSku,
  method: HttpMethod,
  name: string,
  chainName: string,
  example: Record<string, unknown>,
): Record<string, unknown> {
  const alias = method !== sku.method;
  const requestRef = { $ref: `#/components/schemas/${name}Request` };
  const responses: Record<string, unknown> = {
    '200': {
      description: sku.free
        ? 'The result'
        : `The result; ${priceText(sku.priceAtomic)} settled (PAYMENT-RESPONSE header)`,
      content: json({ $ref: `#/components/schemas/${name}Response` }, sku.example),
      ...(sku.free ? {} : { headers: { 'PAYMENT-RESPONSE': { $ref: '#/components/headers/PAYMENT-RESPONSE' } } }),
    },
    '400': {
      description:
        'Invalid input (code invalid_parameter, missing_parameter, unknown_parameter, invalid_json; `field` names the parameter). Answered before any challenge: never charged.',
      content: problemContent(),
    },
  };
  if (method === 'POST') {
    responses['413'] = {
      description: `The JSON body is larger than ${DEFAULT_BODY_LIMIT} (code payload_too_large). Answered before any challenge: never charged.`,
      content: problemContent(),
    };
  }
  if (!sku.free) {
    responses['402'] = {
      description: `Payment required: ${priceText(sku.priceAtomic)} on ${chainName}; or the payment was refused`,
      headers: { 'PAYMENT-REQUIRED': { $ref: '#/components/headers/PAYMENT-REQUIRED' } },
      content: problemContent(),
    };
  }
  if (sku.preflight && sku.path.startsWith('/api/v1/crypto/')) {
    responses['404'] = {
      description:
        'Pre-flight rejection (the window is outside the available data, or holds no data): answered before any challenge, never charged',
      content: problemContent({
        type: 'https://docs.x402-gateway.dev/errors/outside_coverage',
        title: 'outside coverage',
        status: 404,
        code: 'outside_coverage',
        detail: 'the window lies outside the available data',
        field: 'date',
        charged: ZERO_CHARGE_TEXT,
      }),
    };
  }
  responses['503'] = {
    description: sku.available
      ? 'A dependency is unavailable (payments, store, live book); never charged'
      : 'Not served yet (code sku_unavailable); never charged',
    content: problemContent(),
  };
  responses['5XX'] = { description: 'Server failure; never settled', content: problemContent() };

  const op: Record<string, unknown> = {
    operationId: `${camel(sku.id)}${alias ? 'Post' : ''}`,
    summary: sku.title,
    description: `${sku.description}${alias ? ' (POST alias of the GET route: the same parameters as a JSON body.)' : ''}${sku.available ? '' : ' Not served yet: answers 503 sku_unavailable.'}`,
    tags: sku.categories,
    security: sku.free ? [] : [{ 'payment-required': [] }],
    responses,
    'x-price': { ...pricing(sku), text: priceText(sku.priceAtomic) },
    'x-available': sku.available,
    'x-latency': { avgMs: sku.avgLatencyMs, targetMs: sku.latencyTargetMs },
  };
  if (method === 'GET') {
    const schema = inputJsonSchema(sku);
    const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
    const required = new Set((schema.required ?? []) as string[]);
    op.parameters = Object.entries(properties).map(([pname, p]) => {
      const { description, ...rest } = p;
      return {
        name: pname,
        in: 'query',
        required: required.has(pname),
        ...(description ? { description } : {}),
        schema: rest,
        ...(example[pname] !== undefined ? { example: example[pname] } : {}),
      };
    });
  } else {
    op.requestBody = { required: true, content: json(requestRef, example) };
  }
  return op;
}
