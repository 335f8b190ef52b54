/**
 * Which client instance a request, and a connection, belongs to: the one place that decides it
 * (the analyzer's findings, the instance grouping and `kcid requests` rows all ask here).
 *
 * - A request belongs to the ID its own header carries. A request whose header carries none belongs
 *   to the connection's ID: the first header ID of the connection (KIP-1313's connection context: a
 *   v1 header cannot carry the ID, and with request header v3 only the connection's first request
 *   carries it, "and then omit[s] the client instance ID from all subsequent requests").
 * - A connection belongs to its first header ID; a legacy connection (no header ID) to its KIP-714
 *   telemetry ID when the capture shows one; else to nobody (it is grouped by address and ClientId).
 */

/** The instance ID a request belongs to: its header's, else the connection's first header ID. */
export function requestOwner<T>(headerId: T | null, connectionId: T | null): T | null {
  return headerId ?? connectionId;
}

/** The instance ID a connection belongs to, and why: its first header ID, else its telemetry ID. */
export function connectionOwner(
  headerIds: readonly string[],
  telemetryId: string | null,
): { id: string | null; source: 'header' | 'telemetry' | 'none' } {
  const header = headerIds[0];
  if (header !== undefined) return { id: header, source: 'header' };
  return telemetryId !== null ? { id: telemetryId, source: 'telemetry' } : { id: null, source: 'none' };
}
