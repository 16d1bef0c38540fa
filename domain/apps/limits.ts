import { DomainError } from '../shared/decider.js';

/**
 * The documented limits of an app's files. The decider enforces them (no writer gets past them);
 * each refusal has a stable code and names the path.
 */
export const MAX_APP_FILES = 500;
/** Decoded bytes of all the head's files together. */
export const MAX_APP_TOTAL_BYTES = 10 * 1024 * 1024;
/** Decoded bytes of one file (as base64, 683 KiB: it still fits one write). */
export const MAX_APP_FILE_BYTES = 512 * 1024;
/**
 * Content carried by one write, counted as JSON text (escapes included) (one `AppFilesChanged` event): events travel whole through
 * the bus and the event store (Kafka's default message.max.bytes is 1 MiB), so a bigger app is
 * written in several changes. Snapshots and restores carry no contents (see state.ts).
 */
export const MAX_APP_WRITE_BYTES = 768 * 1024;
export const MAX_APP_PATH_LENGTH = 255;
export const MAX_APP_PATH_SEGMENTS = 16;
export const MAX_APP_NAME_LENGTH = 200;
export const MAX_APP_DESCRIPTION_LENGTH = 2000;
export const MAX_APP_VERSIONS = 1000;
export const MAX_VERSION_LABEL_LENGTH = 200;
/** Serialized size of the contract (both schemas). */
export const MAX_CONTRACT_BYTES = 64 * 1024;

export const APP_FILE_EXTENSIONS = ['html', 'css', 'js', 'mjs', 'ts', 'tsx', 'jsx', 'json', 'svg', 'png', 'jpg', 'gif', 'webp', 'ico', 'txt', 'md'] as const;
/** Binary types must come as base64; text types may come either way. */
export const BINARY_EXTENSIONS: ReadonlySet<string> = new Set(['png', 'jpg', 'gif', 'webp', 'ico']);

export const APP_LIMITS = {
  files: MAX_APP_FILES,
  totalBytes: MAX_APP_TOTAL_BYTES,
  fileBytes: MAX_APP_FILE_BYTES,
  writeBytes: MAX_APP_WRITE_BYTES,
  pathLength: MAX_APP_PATH_LENGTH,
  pathSegments: MAX_APP_PATH_SEGMENTS,
  versions: MAX_APP_VERSIONS,
  contractBytes: MAX_CONTRACT_BYTES,
  extensions: APP_FILE_EXTENSIONS,
};

/** Windows device names: refused as a file's base name (with any extension) so an export never breaks. */
const RESERVED_NAMES = new Set(['con', 'prn', 'aux', 'nul', ...Array.from({ length: 9 }, (_, i) => `com${i + 1}`), ...Array.from({ length: 9 }, (_, i) => `lpt${i + 1}`)]);
/** Characters refused anywhere in a path: control characters (C0, DEL, C1), and those hostile to shells, URLs or file systems. */
// eslint-disable-next-line no-control-regex
const HOSTILE = /[\u0000-\u001f\u007f-\u009f<>:"|?*\\#%'`$;&{}\u200b-\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]/u;
const SEGMENT = /^[A-Za-z0-9._@+=,\- ()\[\]~!]+$/u;

export function appPathError(code: string, path: string, message: string): DomainError {
  return new DomainError(code, message, code === 'APP_TOO_LARGE' || code === 'APP_FILE_TOO_LARGE' || code === 'APP_WRITE_TOO_LARGE' || code === 'APP_TOO_MANY_FILES' ? 'too_large' : 'invalid', { path });
}

/**
 * A client's path in its one stored form: `/` separators, no leading `./` or `/` allowed (absolute
 * paths are refused, not rewritten), no `.` or `..` segments, no empty segments, no hostile
 * characters, an allowed extension. Returns the normalised path or throws with a stable code.
 */
export function normaliseAppPath(raw: string): string {
  if (typeof raw !== 'string' || raw.length === 0) throw appPathError('APP_PATH_EMPTY', String(raw), 'a file path is required');
  if (raw.length > MAX_APP_PATH_LENGTH) throw appPathError('APP_PATH_TOO_LONG', raw.slice(0, 300), `a path has at most ${MAX_APP_PATH_LENGTH} characters`);
  if (raw.startsWith('/') || /^[A-Za-z]:/.test(raw) || raw.startsWith('~')) throw appPathError('APP_PATH_ABSOLUTE', raw, `path ${JSON.stringify(raw)} is absolute; paths are relative to the app's root`);
  if (HOSTILE.test(raw)) throw appPathError('APP_PATH_HOSTILE', raw, `path ${JSON.stringify(raw)} holds a control or reserved character`);
  const nfc = raw.normalize('NFC');
  let segments = nfc.split('/');
  if (segments[0] === '.') segments = segments.slice(1);
  if (segments.some((s) => s === '..')) throw appPathError('APP_PATH_TRAVERSAL', raw, `path ${JSON.stringify(raw)} climbs out of the app with ..`);
  if (segments.length === 0 || segments.some((s) => s === '' || s === '.')) throw appPathError('APP_PATH_INVALID', raw, `path ${JSON.stringify(raw)} has an empty or "." segment`);
  if (segments.length > MAX_APP_PATH_SEGMENTS) throw appPathError('APP_PATH_TOO_DEEP', raw, `a path has at most ${MAX_APP_PATH_SEGMENTS} segments`);
  for (const segment of segments) {
    if (!SEGMENT.test(segment) || segment.startsWith(' ') || segment.endsWith(' ') || segment.endsWith('.') || segment.startsWith('-')) {
      throw appPathError('APP_PATH_HOSTILE', raw, `path segment ${JSON.stringify(segment)} is not allowed (letters, digits and . _ - @ + = , ( ) [ ] ~ ! inside; no leading "-" or space, no trailing "." or space)`);
    }
    if (RESERVED_NAMES.has(segment.split('.')[0].toLowerCase())) throw appPathError('APP_PATH_HOSTILE', raw, `path segment ${JSON.stringify(segment)} is a reserved device name`);
  }
  const name = segments[segments.length - 1];
  const dot = name.lastIndexOf('.');
  const ext = dot > 0 ? name.slice(dot + 1).toLowerCase() : '';
  if (!(APP_FILE_EXTENSIONS as readonly string[]).includes(ext)) {
    throw appPathError('APP_FILE_TYPE_NOT_ALLOWED', raw, `path ${JSON.stringify(raw)}: allowed extensions are ${APP_FILE_EXTENSIONS.join(', ')}`);
  }
  return segments.join('/');
}

export function extensionOf(path: string): string {
  const dot = path.lastIndexOf('.');
  return dot === -1 ? '' : path.slice(dot + 1).toLowerCase();
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Decoded size of a content in its encoding, or null when base64 is malformed. */
export function decodedSize(content: string, encoding: 'utf8' | 'base64'): number | null {
  if (encoding === 'utf8') return Buffer.byteLength(content, 'utf8');
  if (!BASE64.test(content)) return null;
  const padding = content.endsWith('==') ? 2 : content.endsWith('=') ? 1 : 0;
  return (content.length / 4) * 3 - padding;
}
