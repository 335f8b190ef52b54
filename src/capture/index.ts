/** The capture stage: a pcap or pcapng file (plain or gzip, file or stdin) in, packets out. */
export { readCapture, readCaptureStream } from './read.js';
export { CaptureError, LinkType } from './types.js';
export type { CaptureFormat, CaptureStats, PacketRef, PacketSink, ReadCaptureOptions } from './types.js';
