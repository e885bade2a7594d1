export { ENDPOINTS, type Endpoint } from './endpoints.js';
export {
  createProvider,
  type Provider,
  type ProviderOptions,
  type ProviderRequest,
  type StreamOptions,
} from './http-provider.js';
export {
  extractProviderMessage,
  isRetryableStatus,
  ProviderError,
  type ProviderErrorDetails,
  type ProviderStall,
} from './provider-error.js';
export {
  backoffDelay,
  parseRetryAfter,
  type ResolvedRetryOptions,
  type RetryOptions,
  resolveRetryOptions,
  sleep,
} from './retry-policy.js';
export { readSseEvents, type SseEvent, SseParser } from './sse-parser.js';
