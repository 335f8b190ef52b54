import { describe, expect, it } from 'vitest';
import { errorLabel } from '../src/kafka/protocol.js';

describe('errorLabel', () => {
  it.each([
    [0, 'NONE (0)'],
    [-1, 'UNKNOWN_SERVER_ERROR (-1)'],
    [35, 'UNSUPPORTED_VERSION (35)'],
    [42, 'INVALID_REQUEST (42)'],
    [999, 'unknown error code (999)'],
    [-32768, 'unknown error code (-32768)'],
  ])('%i is %s', (code, label) => {
    expect(errorLabel(code)).toBe(label);
  });
});
