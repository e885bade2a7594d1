/**
 * Library messages say what a library caller can do (`resolveModel(id, { reasoning: true })`,
 * `retry.maxRetryAfterMs`); the CLI says what a CLI user can do instead: a flag or a config-file field.
 */
const REWRITES: ReadonlyArray<readonly [RegExp, string]> = [
  [
    /\(declare it with resolveModel\(id, \{ reasoning: true \}\)\)/g,
    '(if it does reason, declare "reasoning": true for it under "models" in the config file)',
  ],
  [/\(retry\.maxRetryAfterMs = ([^)]*)\)/g, '(--max-retry-wait: $1)'],
  [/resolveModel\(id, \{ ?input: \{ ?image: true ?\} ?\}\)/g, '--image-input'],
  [/defineModel\(\{\.\.\.\}\)/g, 'a "models" entry in the config file'],
];

/** `message` with library advice replaced by the CLI's. */
export function cliAdvice(message: string): string {
  let out = message;
  for (const [pattern, replacement] of REWRITES) out = out.replace(pattern, replacement);
  return out;
}
