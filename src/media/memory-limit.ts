import { loadNativeAddon } from './native-addon.js';
import { checkMemoryLimit } from './policy.js';

/**
 * Sets the process-wide cap on memory that `processMedia` calls in flight may reserve together, across every
 * worker_thread (default `DEFAULT_MEDIA_MEMORY_LIMIT`, 1 GiB). Each call reserves an estimate computed from the
 * image header (decoder intermediates + decoded pixels + output) before it decodes anything: a call whose estimate
 * exceeds the cap is refused with ERR_MEDIA_TOO_LARGE; one that does not fit next to the calls in flight waits for
 * them. Returns the previous cap. Throws `MediaError` ERR_INVALID_ARGUMENT below 1 MiB or for a non-integer.
 */
export function setMediaMemoryLimit(bytes: number): number {
  checkMemoryLimit(bytes);
  return loadNativeAddon().setMemoryCap(bytes);
}

/** Bytes reserved right now by media calls in flight (all worker threads). */
export function mediaMemoryInFlight(): number {
  return loadNativeAddon().memoryInFlight();
}
