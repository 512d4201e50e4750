/**
 * What the payment core charges for: a priced resource behind the gate, with
 * what its challenge and its Bazaar declaration say about it.
 */
/**
 * A priced resource: an HTTP route (set by the router) or an MCP tool (set by the MCP door). Built once and
 * never changed (readonly): the challenges are cached per route object.
 */
export interface PaidRoute {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly description: string;
  /** Price in USDC atomic units (6 decimals). */
  readonly priceAtomic: string;
  readonly mimeType: string;
  readonly inputSchemaJson?: object;
  /** A request that validates against the input schema (query parameters or JSON body): the Bazaar `input` example. */
  readonly inputExample?: Record<string, unknown>;
  readonly outputExample?: unknown;
  /** An MCP tool (the MCP door): the Bazaar declaration is the MCP flavour (tool name, transport) instead of the HTTP one. */
  readonly mcpTool?: { name: string; transport: 'streamable-http' };
}
