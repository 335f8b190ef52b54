/** Raised when an export cannot be written (a bad --to, a full disk, permissions): one line, exit 2. */
export class ExportError extends Error {
  override readonly name = 'ExportError';
}
