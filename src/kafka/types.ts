/**
 * Kafka stage types: decoded request/response headers and the few bodies kcid reads.
 * Byte ranges are decoded from a bounded prefix of each frame; the rest is never copied.
 */

/** One tagged field of a request header other than tag 0, kept as tag + size. */
export interface TaggedFieldRef {
  tag: number;
  size: number;
}

/** A problem found while decoding a request header (drives the `malformed-request-header` rule). */
export interface HeaderProblem {
  /** Stable short code, e.g. 'tag0-size', 'tags-not-ascending', 'tag-repeated', 'overrun'. */
  code: 'tag0-size' | 'tags-not-ascending' | 'tag-repeated' | 'overrun' | 'bad-client-id';
  message: string;
}

export interface RequestHeader {
  apiKey: number;
  apiVersion: number;
  correlationId: number;
  /** Request header version used to decode (from the schemas); null when the API key/version is unknown to kcid. */
  headerVersion: number | null;
  /** ClientId (v1+): null when absent or null on the wire. */
  clientId: string | null;
  /** The header has a ClientId field and its length was read: with clientId null, the wire said null (KIP-1313 clients send null after a connection's first request). */
  clientIdPresent: boolean;
  /** Tag 0 (KIP-1313 ClientInstanceId), 16 bytes, when present and well-formed. Aliases the decoded buffer: copy to keep. */
  clientInstanceId: Uint8Array | null;
  /** Other tagged fields, in wire order (the first MAX_KEPT_TAGS of headers.ts). */
  otherTags: TaggedFieldRef[];
  /** Bytes from the start of the frame (after the size prefix) to the end of the header; the whole frame on 'overrun'. */
  headerLength: number;
  problems: HeaderProblem[];
}

export interface ResponseHeaderInfo {
  correlationId: number;
  headerVersion: number;
  /** Offset of the body from the start of the frame (after the size prefix). */
  headerLength: number;
}
