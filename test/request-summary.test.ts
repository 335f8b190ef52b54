/**
 * The short line `kcid requests --bodies` shows in table form: topics by name before TopicId, and
 * never the zero UUID (Kafka's "no ID") as a topic.
 */
import { describe, expect, it } from 'vitest';
import { requestSummary } from '../src/kafka/summary.js';

const ZERO = new Uint8Array(16);
const ID = Uint8Array.from([0x3e, 0x4d, 0x8d, 0x2b, 0x5a, 0x1f, 0x4c, 0x02, 0x9b, 0x6a, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66]);

describe('requestSummary', () => {
  it('Metadata v12 names its topics by name, not by the zero TopicId that stands before the name', () => {
    const body = { Topics: [{ TopicId: ZERO, Name: 'orders' }, { TopicId: ZERO, Name: 'payments' }], AllowAutoTopicCreation: false, IncludeTopicAuthorizedOperations: false };
    expect(requestSummary(3, 12, body)).toBe('orders payments');
  });

  it('a topic given only by its ID (Metadata v12 with a null name) shows the ID in base64; a zero ID and no name shows nothing', () => {
    const body = { Topics: [{ TopicId: ID, Name: null }, { TopicId: ZERO, Name: null }], AllowAutoTopicCreation: false, IncludeTopicAuthorizedOperations: false };
    expect(requestSummary(3, 12, body)).toBe('Pk2NK1ofTAKbahEiM0RVZg');
  });
});
