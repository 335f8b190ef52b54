/**
 * Request/response pairing: the requests of one connection that await their response, matched by
 * correlation ID (Wireshark keeps the same per-conversation queue).
 */
import { EMPTY_LIST } from '../base/lists.js';
import type { KafkaRequest } from './events.js';

/**
 * Requests awaiting their response, oldest first. A broker answers the requests of a connection in
 * the order they were sent (protocol guide, "Network"), so the one looked for is nearly always the
 * first: two arrays searched from the front, rather than a Map whose table a set and a delete per
 * request keep reallocating. The owner bounds the count (maxPendingRequests), so searches stay short.
 */
export class PendingRequests {
  // Most connections have one request in flight at a time: the arrays are made on the first add
  // and kept when they empty, for the next request.
  private ids: number[] = EMPTY_LIST;
  private requests: KafkaRequest[] = EMPTY_LIST;

  get size(): number {
    return this.ids.length;
  }

  get(correlationId: number): KafkaRequest | undefined {
    const i = this.ids.indexOf(correlationId);
    return i < 0 ? undefined : this.requests[i];
  }

  has(correlationId: number): boolean {
    return this.ids.indexOf(correlationId) >= 0;
  }

  add(correlationId: number, r: KafkaRequest): void {
    if (this.ids === EMPTY_LIST) {
      this.ids = [correlationId];
      this.requests = [r];
      return;
    }
    this.ids.push(correlationId);
    this.requests.push(r);
  }

  /** Removes the request with this correlation id; returns it, or undefined when none waits. */
  delete(correlationId: number): KafkaRequest | undefined {
    const i = this.ids.indexOf(correlationId);
    if (i < 0) return undefined;
    if (i === 0) {
      this.ids.shift();
      return this.requests.shift();
    }
    this.ids.splice(i, 1);
    return this.requests.splice(i, 1)[0];
  }

  removeOldest(): KafkaRequest | undefined {
    if (this.ids.length === 0) return undefined;
    this.ids.shift();
    return this.requests.shift();
  }
}
