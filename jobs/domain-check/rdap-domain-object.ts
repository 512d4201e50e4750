/**
 * Mapping an RDAP domain object (RFC 9083 §5.3) to the domain-check record:
 * status from the RDAP status list, registration / expiration / last-changed
 * dates from the events (ISO 8601 UTC), the registrar's name from its jCard
 * `fn` (else its handle; nested registrar entities are searched too), the
 * nameservers in lower case without the trailing dot, deduplicated. Missing
 * or unreadable fields are null, never guessed.
 */

export const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export interface RdapDomainFields {
  status: string;
  registeredDate: string | null;
  expirationDate: string | null;
  lastUpdated: string | null;
  registrar: string | null;
  nameservers: string[];
  handle: string | null;
  rdapStatus: string[];
}

/**
 * The response's `status` from the RDAP status list (RFC 9083 §10.2.2 values):
 * `PENDING_DELETE` ("pending delete"), `REDEMPTION_PERIOD` ("redemption
 * period"), otherwise `REGISTERED` (holds, locks, "inactive" and pending
 * transfers or renewals are all registered names). `AVAILABLE` is set by the
 * caller for a 404.
 */
export function mapStatus(statuses: readonly string[]): string {
  const set = new Set(statuses.map((s) => s.toLowerCase().trim()));
  if (set.has('pending delete')) return 'PENDING_DELETE';
  if (set.has('redemption period')) return 'REDEMPTION_PERIOD';
  return 'REGISTERED';
}

/** ISO 8601 UTC, seconds precision unless the registry gave milliseconds; null for a missing or unreadable date. */
export function isoUtc(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) return null;
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

function eventDate(events: unknown, action: string): string | null {
  if (!Array.isArray(events)) return null;
  for (const e of events) {
    if (isRecord(e) && typeof e.eventAction === 'string' && e.eventAction.toLowerCase() === action)
      return isoUtc(e.eventDate);
  }
  return null;
}

/** jCard (RFC 7095) `fn` of an entity: `["vcard", [["fn", {}, "text", "Name"], ...]]`. */
export function vcardFn(entity: Record<string, unknown>): string | null {
  const card = entity.vcardArray;
  if (!Array.isArray(card) || !Array.isArray(card[1])) return null;
  for (const prop of card[1] as unknown[]) {
    if (Array.isArray(prop) && prop[0] === 'fn' && typeof prop[3] === 'string' && prop[3].trim()) return prop[3].trim();
  }
  return null;
}

/** The registrar entity: top-level first, then nested ones (some registries nest it). */
function findRegistrar(entities: unknown, depth = 0): Record<string, unknown> | undefined {
  if (!Array.isArray(entities) || depth > 2) return undefined;
  for (const e of entities) {
    if (
      isRecord(e) &&
      Array.isArray(e.roles) &&
      e.roles.some((r) => typeof r === 'string' && r.toLowerCase() === 'registrar')
    )
      return e;
  }
  for (const e of entities) {
    if (isRecord(e)) {
      const nested = findRegistrar(e.entities, depth + 1);
      if (nested) return nested;
    }
  }
  return undefined;
}

export function mapDomainObject(object: Record<string, unknown>): RdapDomainFields {
  const rdapStatus = Array.isArray(object.status)
    ? object.status.filter((s): s is string => typeof s === 'string')
    : [];
  const registrarEntity = findRegistrar(object.entities);
  const registrar = registrarEntity
    ? (vcardFn(registrarEntity) ?? (typeof registrarEntity.handle === 'string' ? registrarEntity.handle : null))
    : null;
  const nameservers: string[] = [];
  if (Array.isArray(object.nameservers)) {
    for (const ns of object.nameservers) {
      if (!isRecord(ns)) continue;
      const name =
        typeof ns.ldhName === 'string' ? ns.ldhName : typeof ns.unicodeName === 'string' ? ns.unicodeName : undefined;
      if (name) {
        const normalised = name.toLowerCase().replace(/\.$/, '');
        if (!nameservers.includes(normalised)) nameservers.push(normalised);
      }
    }
  }
  return {
    status: mapStatus(rdapStatus),
    registeredDate: eventDate(object.events, 'registration'),
    expirationDate: eventDate(object.events, 'expiration'),
    lastUpdated: eventDate(object.events, 'last changed'),
    registrar,
    nameservers,
    handle: typeof object.handle === 'string' && object.handle ? object.handle : null,
    rdapStatus,
  };
}
