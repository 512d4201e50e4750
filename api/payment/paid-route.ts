/**
 * What the payment core charges for: a priced resource behind the gate, with
 * what its challenge and its Bazaar declaration say about it.
 */
/** A priced resource: an HTTP route (set by the router) or an MCP tool (set by the MCP door). */
export interface PaidRoute {
  method: 'GET' | 'POST';
  path: string;
  description: string;
  /** Price in USDC atomic units (6 decimals). */
  priceAtomic: string;
  mimeType: string;
  inputSchemaJson?: object;
  /** A request that validates against the input schema (query parameters or JSON body): the Bazaar `input` example. */
  inputExample?: Record<string, unknown>;
  outputExample?: unknown;
  /** An MCP tool (the MCP door): the Bazaar declaration is the MCP flavour (tool name, transport) instead of the HTTP one. */
  mcpTool?: { name: string; transport: 'streamable-http' };
}
