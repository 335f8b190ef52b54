/** What kcid tells about a TLS connection, with or without its keys: plain data, kept in the connection's summary. */
export interface TlsInfo {
  /** The highest version the client offered ('TLS 1.3'), from supported_versions, else the ClientHello's version. */
  offered: string | null;
  /** The version the server chose, or null before (or without) its ServerHello. */
  version: string | null;
  /** IANA name of the chosen cipher suite (or its code in hex when kcid does not know it). */
  cipher: string | null;
  /** The server name the client asked for (SNI), as sent. */
  sni: string | null;
  /** ALPN protocols: the one the server chose, else those the client offered. */
  alpn: string[];
  /** The server answered a HelloRetryRequest first (TLS 1.3). */
  helloRetry: boolean;
  /** An abbreviated handshake: a session ID or ticket (TLS 1.2) or a PSK (TLS 1.3) was accepted. */
  resumed: boolean;
  /** The server's (leaf) certificate: in the clear for TLS 1.2, decrypted for TLS 1.3. */
  certificate: { subject: string; notBefore: string | null; notAfter: string | null } | null;
  /** The first 16 hex digits of the ClientHello's random: the key log line this connection needs. */
  clientRandom: string | null;
  /** Both directions' application data was decrypted with keys from a key log. */
  decrypted: boolean;
}

export function newTlsInfo(): TlsInfo {
  return {
    offered: null,
    version: null,
    cipher: null,
    sni: null,
    alpn: [],
    helloRetry: false,
    resumed: false,
    certificate: null,
    clientRandom: null,
    decrypted: false,
  };
}

export function versionName(v: number): string {
  switch (v) {
    case 0x0304:
      return 'TLS 1.3';
    case 0x0303:
      return 'TLS 1.2';
    case 0x0302:
      return 'TLS 1.1';
    case 0x0301:
      return 'TLS 1.0';
    case 0x0300:
      return 'SSL 3.0';
    default:
      return `0x${v.toString(16).padStart(4, '0')}`;
  }
}
