/**
 * Golden files for provider request bodies: `expectGolden(surface, name, value)` compares `value` with
 * test/fixtures/providers/<surface>/<name>.json, or (re)writes the file when UPDATE_GOLDEN=1. Review a rewritten
 * golden by hand against the SDK types before committing it.
 */

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'providers');

export function expectGolden(surface: string, name: string, value: unknown): void {
  const file = join(root, surface, `${name}.json`);
  const text = `${JSON.stringify(value, null, 2)}\n`;
  if (process.env.UPDATE_GOLDEN === '1') {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
    return;
  }
  if (!existsSync(file)) throw new Error(`missing golden ${file}; run with UPDATE_GOLDEN=1 and review it`);
  expect(JSON.parse(text)).toEqual(JSON.parse(readFileSync(file, 'utf8')));
}
