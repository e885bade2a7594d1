/**
 * The addon this checkout built with node-gyp (binding.gyp) keeps every symbol of ours and of the C libraries hidden:
 * hidden visibility plus the ELF version script cdeps/addon-exports.map, no GNU-only --exclude-libs. Checked with the
 * same ELF reader the prebuild checks use (scripts/check-prebuilds.mjs, binutils readelf).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
// @ts-expect-error -- plain ESM script without type declarations
import { checkElf } from '../../scripts/check-prebuilds.mjs';

const ADDON = fileURLToPath(new URL('../../build/Release/panto_media.node', import.meta.url));

describe('source-built addon symbols', () => {
  it('exports only the two N-API entry points and links only system libraries', () => {
    expect(existsSync(ADDON), `${ADDON} (npm run build:native)`).toBe(true);
    const r = checkElf(ADDON, 'x64', 'glibc') as { bad: string[]; summary: string };
    expect(r.summary).toContain('exports napi_register_module_v1 node_api_module_get_api_version_v1');
    // A source build links the system's libstdc++ and glibc (their versions are the builder's business); nothing else.
    const unexpected = r.bad.filter(
      (b) => !/^needs GLIBC|^needs (GLIBCXX|CXXABI)|^links (libstdc\+\+|libgcc_s)/.test(b),
    );
    expect(unexpected).toEqual([]);
  });
});
