/**
 * TLS 1.3 key stages per direction (RFC 8446 §7.1-7.2): each direction is under its handshake
 * traffic secret, then its application traffic secret of generation N. Finished moves the
 * handshake stage to generation 0 (§4.4.4), KeyUpdate generation N to N+1 (§4.6.3). The next
 * stage's cipher is made once, when a record first needs it, so a record that fails under the
 * current stage can be tried under the next one and a lost Finished or KeyUpdate does not cost the
 * rest of the direction.
 */
import { nextTrafficSecret, tls13Keys } from './keys.js';
import { RecordCipher } from './record-cipher.js';
import { HANDSHAKE_STAGE, NO_STAGE, type Direction, type TlsSide, type TlsState } from './state.js';

/** TLS 1.3: the cipher of the stage after the current one (RFC 8446 §7.1-7.2), made once; null when there is none. */
export function nextCipher(s: TlsState, side: TlsSide, d: Direction): RecordCipher | null {
  if (d.next !== null) return d.next;
  const suite = s.suite;
  if (suite === null) return null;
  let secret: Buffer | undefined;
  if (d.stage.kind === 'handshake') secret = s.secrets?.get(side === 0 ? 'CLIENT_TRAFFIC_SECRET_0' : 'SERVER_TRAFFIC_SECRET_0');
  else if (d.stage.kind === 'application' && d.secret !== null) secret = nextTrafficSecret(suite, d.secret);
  if (secret === undefined) return null;
  d.nextSecret = secret;
  d.next = new RecordCipher(suite, tls13Keys(suite, secret));
  return d.next;
}

/** The direction moves to the next key stage, whose cipher (made by nextCipher) is at its sequence number. */
export function advanceStage(s: TlsState, side: TlsSide, d: Direction): void {
  const stage = d.stage;
  d.stage = stage.kind === 'application' ? { kind: 'application', generation: stage.generation + 1 } : { kind: 'application', generation: 0 };
  d.cipher = d.next;
  d.secret = d.nextSecret;
  d.next = null;
  d.nextSecret = null;
  if (side === 0) s.clientFinished = true;
}

/** A direction starts a stage at the key log line `label` (its handshake or first application traffic secret). */
export function install13(s: TlsState, side: TlsSide, label: string): void {
  const d = s.sides[side];
  const secret = s.secrets?.get(label);
  if (secret === undefined || s.suite === null) {
    d.cipher = null;
    if (s.secrets !== undefined && d.secret !== null) {
      s.out.note('tls', side, s.frame, `the key logs have no ${label} for client random ${s.info.clientRandom}: the rest of the ${d.name}'s traffic is not read`);
    }
    s.info.decrypted = false;
    d.secret = null;
    d.stage = NO_STAGE;
    d.next = null;
    return;
  }
  d.secret = secret;
  d.stage = label.endsWith('_0') ? { kind: 'application', generation: 0 } : HANDSHAKE_STAGE;
  d.next = null;
  d.nextSecret = null;
  d.cipher = new RecordCipher(s.suite, tls13Keys(s.suite, secret));
  if (side === 1 && label === 'SERVER_HANDSHAKE_TRAFFIC_SECRET') {
    s.info.decrypted = true;
    s.noted = true;
  }
}
