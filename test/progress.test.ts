import { describe, expect, it } from 'vitest';
import { Progress } from '../src/cli/progress.js';

function sink(isTTY: boolean, columns?: number) {
  const s = { text: '', isTTY, columns, write: (x: string) => (s.text += x) };
  return s;
}

describe('progress line', () => {
  it('appears on a TTY only after a second, at most every 200 ms, and clears itself', () => {
    let t = 0;
    const err = sink(true, 120);
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

  it('never wraps: cut to the width, the file name shortened in the middle', () => {
    let t = 0;
    const err = sink(true, 80);
    const p = Progress.forStream(err, false, () => t)!;
    p.start('/var/captures/2026-12-01/broker-2.incident-window.pcapng.gz');
    t = 2000;
    p.update(2097152, 4194304, 2000, 4, 2);
    const line = err.text.slice('\r\x1b[2K'.length);
    expect([...line].length).toBeLessThanOrEqual(79);
    expect(line).toBe('kcid: /var/capture…w.pcapng.gz 50% 2.0 MiB read (1.0 MiB/s), 2,000 packets, 4 …');
    const narrow = sink(true, 40);
    const q = Progress.forStream(narrow, false, () => t)!;
    q.start('big.pcap');
    t = 4000;
    q.update(1, 2, 3);
    expect(narrow.text).toBe('\r\x1b[2Kkcid: big.pcap 50% 0.0 MiB read (0.0 M…');
  });

  it('says it is writing the report after the input is read, and erases itself when done', () => {
    let t = 0;
    const err = sink(true, 120);
    const p = Progress.forStream(err, false, () => t)!;
    p.start('big.pcap');
    t = 2000;
    p.update(4194304, 4194304, 2000);
    p.writing();
    expect(err.text.endsWith('\r\x1b[2Kkcid: writing the report…')).toBe(true);
    p.done();
    expect(err.text.endsWith('\r\x1b[2K')).toBe(true);
    // A quick run showed no progress line: nothing to say, nothing to erase.
    const quick = sink(true);
    const q = Progress.forStream(quick, false, () => 0)!;
    q.start('small.pcap');
    q.writing();
    q.done();
    expect(quick.text).toBe('');
  });
});
