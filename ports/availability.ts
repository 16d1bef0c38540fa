/**
 * Which server this process depends on failed to answer, read from an error any adapter threw:
 * `read store`, `key-value store`, `bus`, or null when the error is not about availability. The
 * API answers such an error 503 SERVICE_UNAVAILABLE with Retry-After instead of a 500: the
 * request was not carried out (or not acknowledged) and may be sent again.
 */
export type UnavailableDependency = (err: unknown) => string | null;
