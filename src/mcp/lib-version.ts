/** The package version, read once from the package's package.json (src/package-root.ts finds it). */

import { packageVersion } from '../package-root.js';

export const LIB_VERSION: string = packageVersion();
