/**
 * The `panto` config file: `$PANTO_CONFIG`, else `$XDG_CONFIG_HOME/panto/config.json` (default
 * `~/.config/panto/config.json`). Every field is optional; command-line flags win over it, and a resumed session's
 * own endpoint wins over its defaults.
 *
 * ```json
 * {
 *   "provider": "openai-chat",
 *   "baseUrl": "http://127.0.0.1:8080/v1",
 *   "model": "qwen3-coder",
 *   "apiKeyEnv": "LOCAL_KEY",
 *   "thinking": "low",
 *   "uploads": true,
 *   "models": {
 *     "qwen3-coder": { "contextWindow": 32768, "maxOutputTokens": 8192, "input": ["text", "image"],
 *                      "price": { "input": 0.2, "output": 0.8 }, "reasoning": true }
 *   }
 * }
 * ```
 *
 * A missing file is no config. A file that is not a regular file, is over 1 MiB, is not JSON, or has a field of the
 * wrong type is an error naming the file and the field (exit 2) — never silently ignored.
 */
import os from 'node:os';
import path from 'node:path';
import type { ModelPrice, ThinkingLevel } from '../providers/index.js';
import { openRegular, readUpTo } from '../regular-file.js';
import { CliError, EXIT_USAGE } from './cli-error.js';
import { parseProvider } from './surfaces.js';
import { describeSystemError, isSystemError } from './system-error.js';

const MAX_CONFIG_BYTES = 1024 * 1024;
const THINKING: readonly string[] = ['off', 'low', 'medium', 'high'];
const INPUTS: readonly string[] = ['text', 'image', 'pdf'];

/** A model declared in the config file (one the catalog does not know, or one whose facts it corrects). */
export interface ConfigModel {
  id: string;
  contextWindow?: number;
  maxOutputTokens?: number;
  input?: { image: boolean; pdf: boolean };
  price?: ModelPrice;
  reasoning?: boolean;
}

export interface PantoConfig {
  /** Where it was read from (undefined: no file). */
  file: string | undefined;
  provider?: string;
  baseUrl?: string;
  model?: string;
  apiKeyEnv?: string;
  thinking?: ThinkingLevel;
  /** As `--uploads`: images and PDFs go to the provider's Files API once and are referenced after that. */
  uploads?: boolean;
  models: Map<string, ConfigModel>;
}

/** The config file path for `env`. */
export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.PANTO_CONFIG) return path.resolve(env.PANTO_CONFIG);
  const base = env.XDG_CONFIG_HOME || path.join(env.HOME || os.homedir(), '.config');
  return path.join(base, 'panto', 'config.json');
}

/** Read and check the config file (see the module contract). */
export async function loadConfig(env: NodeJS.ProcessEnv = process.env): Promise<PantoConfig> {
  const file = configPath(env);
  let text: string;
  try {
    const opened = await openRegular(file);
    if ('not' in opened) throw new CliError(`config ${file}: ${opened.not}, not a regular file`, EXIT_USAGE);
    try {
      const bytes = await readUpTo(opened.fh, MAX_CONFIG_BYTES + 1);
      if (bytes.byteLength > MAX_CONFIG_BYTES)
        throw new CliError(`config ${file}: over ${MAX_CONFIG_BYTES} bytes; not read`, EXIT_USAGE);
      text = bytes.toString('utf8');
    } finally {
      await opened.fh.close();
    }
  } catch (err) {
    if (isSystemError(err) && err.code === 'ENOENT' && env.PANTO_CONFIG === undefined)
      return { file: undefined, models: new Map() };
    if (isSystemError(err)) throw new CliError(`config: ${describeSystemError(err, file)}`, EXIT_USAGE);
    throw err;
  }
  return parseConfig(text, file);
}

/** Check the JSON text of a config file (`file` names it in errors). */
export function parseConfig(text: string, file: string): PantoConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new CliError(`config ${file}: not valid JSON (${(err as Error).message})`, EXIT_USAGE);
  }
  const bad = (field: string, expected: string, got: unknown) =>
    new CliError(`config ${file}: '${field}' must be ${expected}, got ${describe(got)}`, EXIT_USAGE);
  if (!isObject(raw)) throw bad('(the file)', 'a JSON object', raw);
  const known = new Set([
    'provider',
    'baseUrl',
    'model',
    'apiKeyEnv',
    'thinking',
    'uploads',
    'models',
    '$schema',
  ]);
  for (const key of Object.keys(raw))
    if (!known.has(key))
      throw new CliError(
        `config ${file}: unknown field '${key}' (known: ${[...known].filter((k) => k !== '$schema').join(', ')})`,
        EXIT_USAGE,
      );
  const config: PantoConfig = { file, models: new Map() };
  const str = (key: 'provider' | 'baseUrl' | 'model' | 'apiKeyEnv'): string | undefined => {
    const v = raw[key];
    if (v === undefined) return undefined;
    if (typeof v !== 'string' || v === '') throw bad(key, 'a non-empty string', v);
    return v;
  };
  const provider = str('provider');
  if (provider !== undefined) {
    try {
      parseProvider(provider);
    } catch (err) {
      throw new CliError(
        `config ${file}: 'provider': ${(err as Error).message.replace(/^--provider /, '')}`,
        EXIT_USAGE,
      );
    }
    config.provider = provider;
  }
  const baseUrl = str('baseUrl');
  if (baseUrl !== undefined) {
    if (!/^https?:\/\//.test(baseUrl)) throw bad('baseUrl', 'an http:// or https:// URL', baseUrl);
    config.baseUrl = baseUrl;
  }
  const model = str('model');
  if (model !== undefined) config.model = model;
  const keyEnv = str('apiKeyEnv');
  if (keyEnv !== undefined) config.apiKeyEnv = keyEnv;
  if (raw.thinking !== undefined) {
    if (typeof raw.thinking !== 'string' || !THINKING.includes(raw.thinking))
      throw bad('thinking', `one of ${THINKING.join(', ')}`, raw.thinking);
    config.thinking = raw.thinking as ThinkingLevel;
  }
  if (raw.uploads !== undefined) {
    if (typeof raw.uploads !== 'boolean') throw bad('uploads', 'true or false', raw.uploads);
    config.uploads = raw.uploads;
  }
  if (raw.models !== undefined) {
    if (!isObject(raw.models)) throw bad('models', 'an object of model id -> settings', raw.models);
    for (const [id, spec] of Object.entries(raw.models)) config.models.set(id, parseModel(id, spec, bad));
  }
  return config;
}

function parseModel(
  id: string,
  spec: unknown,
  bad: (field: string, expected: string, got: unknown) => CliError,
): ConfigModel {
  const at = `models.${id}`;
  if (id.trim() === '') throw bad('models', 'keyed by non-empty model ids', id);
  if (!isObject(spec)) throw bad(at, 'an object', spec);
  const known = new Set(['contextWindow', 'maxOutputTokens', 'input', 'price', 'reasoning']);
  for (const key of Object.keys(spec))
    if (!known.has(key)) throw bad(`${at}.${key}`, `one of the known fields (${[...known].join(', ')})`, key);
  const model: ConfigModel = { id };
  const int = (key: 'contextWindow' | 'maxOutputTokens') => {
    const v = spec[key];
    if (v === undefined) return;
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v <= 0)
      throw bad(`${at}.${key}`, 'a positive integer', v);
    model[key] = v;
  };
  int('contextWindow');
  int('maxOutputTokens');
  if (spec.input !== undefined) {
    const input = spec.input;
    if (!Array.isArray(input) || input.some((x) => typeof x !== 'string' || !INPUTS.includes(x)))
      throw bad(`${at}.input`, `a list of ${INPUTS.map((i) => `"${i}"`).join(', ')}`, input);
    model.input = { image: input.includes('image'), pdf: input.includes('pdf') };
  }
  if (spec.price !== undefined) {
    const p = spec.price;
    if (!isObject(p)) throw bad(`${at}.price`, 'an object of US dollars per million tokens', p);
    const price: Partial<ModelPrice> = {};
    for (const key of Object.keys(p)) {
      if (!['input', 'output', 'cacheRead', 'cacheWrite'].includes(key))
        throw bad(`${at}.price.${key}`, 'one of input, output, cacheRead, cacheWrite', key);
      const v = p[key];
      if (typeof v !== 'number' || !Number.isFinite(v) || v < 0)
        throw bad(`${at}.price.${key}`, 'a number >= 0 (dollars per million tokens)', v);
      price[key as keyof ModelPrice] = v;
    }
    if (price.input === undefined || price.output === undefined)
      throw bad(`${at}.price`, 'an object with at least input and output', p);
    model.price = price as ModelPrice;
  }
  if (spec.reasoning !== undefined) {
    if (typeof spec.reasoning !== 'boolean') throw bad(`${at}.reasoning`, 'true or false', spec.reasoning);
    model.reasoning = spec.reasoning;
  }
  return model;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function describe(v: unknown): string {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 60 ? `${s.slice(0, 60)}…` : s;
}
