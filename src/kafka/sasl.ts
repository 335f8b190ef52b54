/**
 * SASL's headerless token exchange. After a SaslHandshake v0 that succeeds, the client and the
 * broker exchange bare size-prefixed tokens without a Kafka header (KIP-43), possibly empty; with
 * SaslHandshake v1 the tokens travel inside SaslAuthenticate requests instead (KIP-152), so there is
 * nothing to follow. Tokens are secrets: they are counted, never decoded or kept.
 */
import { PLAUSIBLE, type Plausibility } from './framer.js';
import { API_KEY } from './protocol.js';

const SASL_HANDSHAKE = API_KEY.SaslHandshake;

export class SaslTokens {
  /** A token exchange is in progress: frames are tokens until the client plainly sends a request. */
  active = false;
  private handshakeCorrelation = 0;

  /** A request went out: remember a handshake's correlation ID, which the next real request must exceed. */
  request(apiKey: number, correlationId: number): void {
    if (apiKey === SASL_HANDSHAKE) this.handshakeCorrelation = correlationId;
  }

  /** A response came in; returns true when it starts a token exchange. */
  response(apiKey: number, apiVersion: number, errorCode: number | null): boolean {
    if (apiKey === SASL_HANDSHAKE && apiVersion === 0 && errorCode === 0) this.active = true;
    return this.active;
  }

  /**
   * During an exchange, is this client frame a token? It is, unless it is plainly the next request
   * after authentication finished (a plausible request whose correlation ID follows the handshake's);
   * then the exchange is over.
   */
  clientFrameIsToken(verdict: Plausibility, correlationId: number): boolean {
    if (verdict !== PLAUSIBLE || correlationId <= this.handshakeCorrelation) return true;
    this.active = false;
    return false;
  }
}
