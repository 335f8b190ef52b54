/**
 * SASL's headerless token exchange. After a SaslHandshake v0 that succeeds, the client and the
 * broker exchange bare size-prefixed tokens without a Kafka header (KIP-43), possibly empty; with
 * SaslHandshake v1 the tokens travel inside SaslAuthenticate requests instead (KIP-152), so there is
 * nothing to follow. Tokens are secrets: they are counted, never decoded or kept.
 *
 * A token is arbitrary bytes (a PLAIN token is authzid NUL user NUL password), so whether a frame
 * "looks like a request" says nothing: the exchange is followed by the mechanism's own count of
 * messages, and only where the mechanism does not say (GSSAPI, mechanisms kcid does not know, or an
 * exchange the capture lost bytes of) by the first frame that is plainly the connection's next request.
 */
import { PLAUSIBLE, type Plausibility } from './framer.js';
import { API_KEY } from './protocol.js';

const SASL_HANDSHAKE = API_KEY.SaslHandshake;
const SASL_AUTHENTICATE = API_KEY.SaslAuthenticate;

/**
 * How far past the handshake's correlation ID the first request after an open-ended exchange may be:
 * clients number their requests one by one, so a token's random bytes rarely land this close.
 */
const CORRELATION_STEP_LIMIT = 1 << 24;

/** Messages each side sends in one round of a mechanism; null: the mechanism does not say. */
interface Rounds {
  client: number;
  server: number;
}

/**
 * PLAIN (RFC 4616): the client's one message, the server's answer (empty on success).
 * SCRAM-SHA-256/512 (RFC 5802 §5, RFC 7677): client-first, server-first, client-final, server-final.
 * OAUTHBEARER (RFC 7628 §3.2): the client's initial response and the server's answer; an error
 * answer (a JSON status, so not empty) is followed by the client's %x01 and the server's failure (§3.2.3).
 */
function roundsOf(mechanism: string | null): Rounds | null {
  switch (mechanism) {
    case 'PLAIN':
    case 'OAUTHBEARER':
      return { client: 1, server: 1 };
    case 'SCRAM-SHA-256':
    case 'SCRAM-SHA-512':
      return { client: 2, server: 2 };
    default:
      return null; // GSSAPI (RFC 4752: as many rounds as Kerberos needs) and anything else
  }
}

/** SaslAuthenticate (KIP-152) carries tokens in its body: printers show its size, never its bytes. */
export function bodyIsSecret(apiKey: number): boolean {
  return apiKey === SASL_AUTHENTICATE;
}

export class SaslTokens {
  /** Client frames are tokens. */
  clientActive = false;
  /** Broker frames are tokens. */
  serverActive = false;
  private handshakeCorrelation = 0;
  private mechanism: string | null = null;
  /** Tokens still due from each side; null while the exchange is open-ended. */
  private clientLeft: number | null = null;
  private serverLeft: number | null = null;
  /** OAUTHBEARER's error round has been granted. */
  private extraRound = false;

  /** Either direction is in the exchange: frames may be empty. */
  get active(): boolean {
    return this.clientActive || this.serverActive;
  }

  /** The exchange is counted by its mechanism (false: it ends at the first plain request). */
  get counted(): boolean {
    return this.clientLeft !== null;
  }

  /** A request went out: remember a handshake's correlation ID and mechanism. */
  request(apiKey: number, correlationId: number, mechanism: string | null): void {
    if (apiKey !== SASL_HANDSHAKE) return;
    this.handshakeCorrelation = correlationId;
    this.mechanism = mechanism;
  }

  /** A response came in; returns true when it starts a token exchange. */
  response(apiKey: number, apiVersion: number, errorCode: number | null): boolean {
    if (apiKey !== SASL_HANDSHAKE || apiVersion !== 0 || errorCode !== 0) return false;
    const rounds = roundsOf(this.mechanism);
    this.clientActive = true;
    this.serverActive = true;
    this.clientLeft = rounds?.client ?? null;
    this.serverLeft = rounds?.server ?? null;
    this.extraRound = false;
    return true;
  }

  /**
   * During an exchange, is this client frame a token? By the mechanism's count; for an open-ended
   * exchange, it is unless it is plainly the next request (a well-formed request whose correlation ID
   * continues the connection's sequence after the handshake's), which ends the exchange.
   * `verdict` is asked only then (it costs a decode).
   */
  clientFrameIsToken(verdict: () => Plausibility, correlationId: number): boolean {
    if (this.clientLeft !== null) {
      if (this.clientLeft === 0) {
        this.clientActive = false;
        return false;
      }
      if (--this.clientLeft === 0) this.clientActive = false;
      return true;
    }
    const step = correlationId - this.handshakeCorrelation;
    if (step <= 0 || step > CORRELATION_STEP_LIMIT || verdict() !== PLAUSIBLE) return true;
    this.clientActive = false;
    this.serverActive = false;
    return false;
  }

  /**
   * During an exchange, a broker frame of `size` bytes is a token (even an empty one). Returns
   * false when the exchange had no more broker tokens due: the frame is a response.
   */
  serverFrameIsToken(size: number): boolean {
    if (this.serverLeft === null) return true;
    if (this.serverLeft === 0) {
      this.serverActive = false;
      return false;
    }
    this.serverLeft--;
    if (this.serverLeft === 0 && this.mechanism === 'OAUTHBEARER' && size > 0 && !this.extraRound) {
      // RFC 7628 §3.2.3: the server's error status; the client answers %x01, the server then fails.
      this.extraRound = true;
      this.clientLeft = (this.clientLeft ?? 0) + 1;
      this.clientActive = true;
      this.serverLeft = 1;
    }
    if (this.serverLeft === 0) {
      this.serverActive = false;
      if (this.clientLeft === 0) this.clientActive = false;
    }
    return true;
  }

  /**
   * Bytes of the exchange were lost (a gap, or bytes that could not be framed): the count is no
   * longer known, so the exchange ends at the first plain request from now on.
   */
  lost(): void {
    if (!this.clientActive) {
      // The client is done: the broker's stream resyncs on the response to its next request.
      this.serverActive = false;
      return;
    }
    this.clientLeft = null;
    this.serverLeft = null;
    this.serverActive = true;
  }
}
