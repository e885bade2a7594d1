import { defineConfig } from 'vitest/config';

/** The terminal tests (`npm run test:tty`): `panto chat` driven through tmux. Slow, so not in `vitest run`. */
export default defineConfig({
  test: {
    include: ['test/tty/**/*.tty.ts'],
    testTimeout: 180_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
