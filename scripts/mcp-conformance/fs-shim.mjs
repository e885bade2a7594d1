// node:fs plus `globSync`, which the conformance CLI imports at load time but uses only in its tier-check report
// (Node 22+). On Node 20 that one function throws a clear error; the scenarios we run never call it.
import fs from 'node:fs';

export * from 'node:fs';
export default fs;
export const globSync =
  fs.globSync ??
  (() => {
    throw new Error('fs.globSync needs Node >= 22 (only the conformance tier-check report uses it)');
  });
