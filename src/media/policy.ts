/**
 * The media policy — defaults, ranges and validation of `ProcessOptions` — in one place. `processMedia` resolves the
 * caller's options here and hands the native addon a complete, validated set (the addon only asserts it);
 * `mediaPolicyFor` (model catalog) derives per-model options from the same defaults. Pure: no addon, no I/O.
 */
import { MediaError } from './media-error.js';
import type { OutputFormat, ProcessOptions } from './types.js';

/** Defaults of `ProcessOptions` (ARCHITECTURE.md: provider limits decide them). */
export const DEFAULT_PROCESS_OPTIONS = {
  maxDimension: 2000,
  maxEncodedBytes: 3_932_160,
  maxPixels: 100_000_000,
  maxInputBytes: 64 * 1024 * 1024,
  maxPdfBytes: 32 * 1024 * 1024,
  jpegQuality: 80,
  keepMetadata: false,
  format: 'auto',
} as const satisfies Required<Omit<ProcessOptions, 'mediaTypeHint'>>;

/** Inclusive integer range of each numeric option. */
export const PROCESS_OPTION_RANGES = {
  maxDimension: [1, 65535],
  maxEncodedBytes: [1, Number.MAX_SAFE_INTEGER],
  maxPixels: [1, Number.MAX_SAFE_INTEGER],
  maxInputBytes: [1, Number.MAX_SAFE_INTEGER],
  maxPdfBytes: [1, Number.MAX_SAFE_INTEGER],
  jpegQuality: [1, 100],
} as const satisfies Record<string, readonly [number, number]>;

/** Default process-wide cap on memory reserved by media calls in flight (all worker threads together): 1 GiB. */
export const DEFAULT_MEDIA_MEMORY_LIMIT = 1024 * 1024 * 1024;

const FORMATS: ReadonlySet<string> = new Set<OutputFormat>(['auto', 'jpeg', 'png', 'webp']);

type IntegerOption = keyof typeof PROCESS_OPTION_RANGES;

/** Every option with a value: what the addon receives. `mediaTypeHint` stays optional (no hint = none). */
export type ResolvedProcessOptions = Required<Omit<ProcessOptions, 'mediaTypeHint'>> & {
  mediaTypeHint?: string;
};

/**
 * `options` merged over the defaults and validated. Throws `MediaError` ERR_INVALID_ARGUMENT naming the option, the
 * expected range and the actual value (unknown keys too). `undefined` values mean "default".
 */
export function resolveProcessOptions(options: unknown): ResolvedProcessOptions {
  const out: ResolvedProcessOptions = { ...DEFAULT_PROCESS_OPTIONS };
  if (options === undefined) return out;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new MediaError('ERR_INVALID_ARGUMENT', `options must be an object, got ${describe(options)}`);
  }
  for (const [key, value] of Object.entries(options as Record<string, unknown>)) {
    if (value === undefined) continue;
    if (key in PROCESS_OPTION_RANGES) {
      const [min, max] = PROCESS_OPTION_RANGES[key as IntegerOption];
      if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
        throw new MediaError(
          'ERR_INVALID_ARGUMENT',
          `${key} must be an integer in [${min}, ${max}], got ${describe(value)}`,
        );
      }
      out[key as IntegerOption] = value;
    } else if (key === 'keepMetadata') {
      if (typeof value !== 'boolean')
        throw new MediaError(
          'ERR_INVALID_ARGUMENT',
          `keepMetadata must be a boolean, got ${describe(value)}`,
        );
      out.keepMetadata = value;
    } else if (key === 'mediaTypeHint') {
      if (typeof value !== 'string')
        throw new MediaError(
          'ERR_INVALID_ARGUMENT',
          `mediaTypeHint must be a string, got ${describe(value)}`,
        );
      out.mediaTypeHint = value;
    } else if (key === 'format') {
      if (typeof value !== 'string' || !FORMATS.has(value)) {
        throw new MediaError(
          'ERR_INVALID_ARGUMENT',
          `format must be 'auto', 'jpeg', 'png' or 'webp', got ${describe(value)}`,
        );
      }
      out.format = value as OutputFormat;
    } else {
      throw new MediaError('ERR_INVALID_ARGUMENT', `unknown option ${key}`);
    }
  }
  return out;
}

/**
 * Check a `ProcessOptions` value the way `processMedia` does, without processing anything: throws `MediaError`
 * `ERR_INVALID_ARGUMENT` naming the bad option. Lets a caller that holds a policy for later (the dispatcher, the
 * agent) fail at once instead of dropping every attachment.
 */
export function checkProcessOptions(options: unknown): void {
  resolveProcessOptions(options);
}

/** Validates a process-wide memory limit in bytes (integer >= 1 MiB). */
export function checkMemoryLimit(bytes: unknown): number {
  if (typeof bytes !== 'number' || !Number.isSafeInteger(bytes) || bytes < 1024 * 1024) {
    throw new MediaError(
      'ERR_INVALID_ARGUMENT',
      `media memory limit must be an integer number of bytes >= 1048576, got ${describe(bytes)}`,
    );
  }
  return bytes;
}

/** An option's actual value as error messages show it (`'webp'`, `12.5`, `an object`). */
export function describe(v: unknown): string {
  if (typeof v === 'string') return `'${v}'`;
  if (v === null || typeof v !== 'object') return String(v);
  return Array.isArray(v) ? 'an array' : 'an object';
}
