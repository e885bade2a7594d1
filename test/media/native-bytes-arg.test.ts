/**
 * The native addon's own check of its `bytes` argument (native/binding/addon.cpp, bytes_arg): every entry point that
 * takes bytes accepts a Uint8Array (a Buffer is one) and refuses anything else with a MediaError whose code is
 * ERR_INVALID_ARGUMENT, before any work: other typed arrays, a DataView, a bare ArrayBuffer, non-objects. The check is
 * napi_get_typedarray_info's own refusal (the addon does not import napi_is_typedarray), so a value that is not a
 * typed array at all must still get the typed error, never a crash or a pending exception.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MediaError } from '../../src/media/media-error.js';
import { loadNativeOnly } from '../../src/media/native-addon.js';
import { resolveProcessOptions } from '../../src/media/policy.js';

const ROOT = join(import.meta.dirname, '..', '..');
const addon = loadNativeOnly(ROOT);
const JPEG_MAGIC = Uint8Array.from([0xff, 0xd8, 0xff, 0xe0]);

const notBytes: [string, unknown][] = [
  ['undefined', undefined],
  ['null', null],
  ['a string', 'abc'],
  ['a number', 42],
  ['a plain object', { length: 4 }],
  ['an array', [0xff, 0xd8]],
  ['a Float32Array', new Float32Array(4)],
  ['an Int8Array', new Int8Array(4)],
  ['a Uint8ClampedArray', new Uint8ClampedArray(4)],
  ['a DataView', new DataView(new ArrayBuffer(4))],
  ['an ArrayBuffer', new ArrayBuffer(4)],
];

function refusal(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  return 'no throw';
}

describe('native addon: the bytes argument', () => {
  it('takes a Uint8Array and a Buffer', () => {
    expect(addon.sniff(JPEG_MAGIC)).toBe('image/jpeg');
    expect(addon.sniff(Buffer.from(JPEG_MAGIC))).toBe('image/jpeg');
    expect(addon.sniff(new Uint8Array(0))).toBeNull();
  });

  it.each(notBytes)(
    'refuses %s with ERR_INVALID_ARGUMENT on sniff, probe, process and decodeToRgba',
    (_, value) => {
      const options = resolveProcessOptions({});
      const calls: [string, () => unknown][] = [
        ['sniff', () => addon.sniff(value as Uint8Array)],
        ['probe', () => addon.probe(value as Uint8Array)],
        ['process', () => addon.process(value as Uint8Array, options)],
        ['decodeToRgba', () => addon.decodeToRgba(value as Uint8Array)],
      ];
      for (const [name, call] of calls) {
        const e = refusal(call);
        expect(e, name).toBeInstanceOf(MediaError);
        expect((e as MediaError).code, name).toBe('ERR_INVALID_ARGUMENT');
        expect((e as MediaError).message, name).toContain('Buffer or Uint8Array');
      }
      // Nothing was left pending: the next call works.
      expect(addon.sniff(JPEG_MAGIC)).toBe('image/jpeg');
    },
  );
});
