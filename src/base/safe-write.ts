/**
 * Opening the files kcid writes without destroying what is already there.
 *
 * `-o PATH` names a regular file (created, or emptied and rewritten), or an existing FIFO or
 * character device, which is written to as it is (`-o /dev/stdout`, `-o /dev/null`, a named
 * pipe a collector reads): such a node is never replaced by a regular file. A symbolic link at
 * PATH is refused rather than followed (a link planted where a CI job writes its report would
 * otherwise make kcid overwrite its target), and so are folders, block devices and sockets.
 *
 * A file that appears whole (a Parquet file, whose footer comes last) is written under a
 * temporary name next to it, `.NAME.PID.RANDOM.tmp`: created exclusively and without following
 * links (O_CREAT|O_EXCL|O_NOFOLLOW), so a file or link planted at that name makes the open fail
 * instead of redirecting the write, and hidden (a leading `.`), which Spark, Trino, Hive, Athena
 * and DuckDB's globs skip.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, constants, fstatSync, ftruncateSync, lstatSync, openSync, renameSync, statSync, type Stats } from 'node:fs';
import { basename, dirname, join } from 'node:path';

const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = constants;

/** A refusal to write a path, with the reason in words (as an errno's message would be). */
export class WriteRefused extends Error {
  override readonly name = 'WriteRefused';
}

/** What a path holds, in the words of a refusal; null for what kcid may write to. */
function refusal(st: Stats): string | null {
  if (st.isFile() || st.isFIFO() || st.isCharacterDevice()) return null;
  if (st.isSymbolicLink()) return 'is a symbolic link (kcid does not write through links: give the file it points to)';
  if (st.isDirectory()) return 'is a directory';
  if (st.isBlockDevice()) return 'is a block device (kcid writes regular files, FIFOs and character devices)';
  if (st.isSocket()) return 'is a socket (kcid writes regular files, FIFOs and character devices)';
  return 'is not a regular file';
}

/** The regular files being read (device and inode): `-o` onto one of them is refused, not emptied. */
const inputs: { dev: number; ino: number }[] = [];

/**
 * Marks the files a command reads, so that no output path (a hard link or another name included)
 * writes over them. A command's inputs replace the last one's: run() may be called again in one
 * process, and an earlier run's input is no input of this one.
 */
export function markInputs(files: readonly string[]): void {
  inputs.length = 0;
  for (const f of files) {
    if (f === '-') continue;
    try {
      const st = statSync(f);
      if (st.isFile()) inputs.push({ dev: st.dev, ino: st.ino });
    } catch {
      // the reader says what is wrong with it
    }
  }
}

const INPUT = 'is an input (kcid does not write over what it reads)';
const isInput = (st: Stats) => st.isFile() && inputs.some((i) => i.dev === st.dev && i.ino === st.ino);

/**
 * The names of the process's own descriptors (`/dev/stdout`, `/dev/stderr`, `/dev/fd/N`), links
 * the system makes: followed, and written as a stream (whatever the descriptor is, the shell
 * opened it), never replaced.
 */
const OWN_DESCRIPTOR = /^\/(dev\/(stdout|stderr|fd\/\d+)|proc\/self\/fd\/\d+)$/;

/** `lstat`, or null when nothing is there. */
function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

/**
 * What a path is, to a writer: 'missing', 'regular' (a file to create or replace) or 'stream'
 * (an existing FIFO or character device, to be written as it is). Throws {@link WriteRefused}
 * for anything else, a symbolic link included.
 */
export function outputKind(path: string): 'missing' | 'regular' | 'stream' {
  if (OWN_DESCRIPTOR.test(path)) return 'stream';
  const st = lstatOrNull(path);
  if (st === null) return 'missing';
  const why = refusal(st);
  if (why !== null) throw new WriteRefused(why);
  if (isInput(st)) throw new WriteRefused(INPUT);
  return st.isFile() ? 'regular' : 'stream';
}

/**
 * Opens `path` for writing as `-o` does: a regular file is created or emptied, an existing FIFO
 * or character device is opened as it is; a link at the path is never followed. The checks are
 * made on the descriptor (fstat after an open that does not truncate), so a path swapped between
 * a check and the open changes nothing. Returns the descriptor; throws the open's error (ENOENT,
 * EACCES, EISDIR...) or a {@link WriteRefused}.
 */
export function openOutput(path: string): number {
  if (OWN_DESCRIPTOR.test(path)) {
    let own: number;
    try {
      own = openSync(path, O_WRONLY);
    } catch (e) {
      // A socket (a descriptor Node passed) cannot be reopened by name.
      if ((e as NodeJS.ErrnoException).code === 'ENXIO') throw new WriteRefused('is a socket (leave out -o to write to standard output)');
      throw e;
    }
    const st = fstatSync(own);
    if (st.isDirectory() || isInput(st)) {
      closeSync(own);
      throw new WriteRefused(st.isDirectory() ? 'is a directory' : INPUT);
    }
    return own;
  }
  let fd: number;
  try {
    fd = openSync(path, O_WRONLY | O_CREAT | O_NOFOLLOW, 0o666);
  } catch (e) {
    // ELOOP is O_NOFOLLOW's answer at a link (some systems say EMLINK or EFTYPE).
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'EMLINK' || code === 'EFTYPE') throw new WriteRefused(refusal(lstatSync(path)) ?? (e as Error).message);
    throw e;
  }
  try {
    const st = fstatSync(fd);
    const why = refusal(st);
    if (why !== null) throw new WriteRefused(why);
    if (isInput(st)) throw new WriteRefused(INPUT);
    if (st.isFile()) ftruncateSync(fd, 0);
    return fd;
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

/**
 * Creates `path` exclusively (it must not exist, and a link there is not followed): for files in
 * a folder kcid made itself, or temporary names. Returns the descriptor.
 */
export function createExclusive(path: string): number {
  return openSync(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o666);
}

/** A hidden temporary name next to `path`: `.NAME.PID.RANDOM.tmp`. */
export function tempNameFor(path: string): string {
  // At most 200 bytes of the name, so that the temporary one stays under NAME_MAX (255) where the name fits.
  const name = Buffer.from(basename(path));
  const base = name.length > 200 ? name.subarray(0, 200).toString().replace(/\uFFFD$/, '') : basename(path);
  return join(dirname(path), `.${base}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
}

/** A temporary file next to `path`, created exclusively: its name and descriptor. */
export function createTemp(path: string): { tmp: string; fd: number } {
  for (let attempt = 0; ; attempt++) {
    const tmp = tempNameFor(path);
    try {
      return { tmp, fd: createExclusive(tmp) };
    } catch (e) {
      // A name taken (by chance, or planted): another random name, a few times.
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 4) throw e;
    }
  }
}

/**
 * Gives the complete temporary file `tmp` the name `path`, which must still be missing or a
 * regular file (a FIFO, device or link that appeared there meanwhile is refused, never replaced).
 */
export function renameInto(tmp: string, path: string): void {
  if (outputKind(path) === 'stream') throw new WriteRefused('is a FIFO or device now (it was not when the write began): left as it is');
  renameSync(tmp, path);
}
