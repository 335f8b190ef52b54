import { describe, expect, it } from 'vitest';
import { Progress } from '../src/cli/progress.js';

function sink(isTTY: boolean) {
  const s = { text: '', isTTY, write: (x: string) => (s.text += x) };
  return s;
}

describe('progress line', () => {
  it('appears on a TTY only after a second, at most every 200 ms, and clears itself', () => {
    let t = 0;
    const err = sink(true);
    const p = Progress.forStream(err, false, () => t)!;
    p.start('big.pcap');
    t = 900;
    p.update(1048576, 4194304, 1000, 3, 1);
    expect(err.text).toBe('');
    t = 2000;
    p.update(2097152, 4194304, 2000, 4, 2);
    expect(err.text).toBe('\r\x1b[2Kkcid: big.pcap 50% 2.0 MiB read (1.0 MiB/s), 2,000 packets, 4 connections, 2 findings');
    t = 2100;
    p.update(3145728, 4194304, 3000, 5, 2);
    expect(err.text.split('\r').length).toBe(2);
    p.done();
    expect(err.text.endsWith('\r\x1b[2K')).toBe(true);
  });

  it('is off when stderr is not a TTY, and with --quiet', () => {
    expect(Progress.forStream(sink(false), false)).toBeNull();
    expect(Progress.forStream(sink(true), true)).toBeNull();
  });
});
