/**
 * Which kafkajs failures mean "the broker is unreachable or busy": those
 * (and any error kafkajs marks retriable) become a DependencyError naming
 * kafka, so callers retry them later; any other error passes through as is.
 */
import { DependencyError, errorMessage } from '../errors.js';

const DEPENDENCY_ERRORS = new Set([
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSRequestTimeoutError',
  'KafkaJSNumberOfRetriesExceeded',
  'KafkaJSBrokerNotFound',
  'KafkaJSLockTimeout',
  'KafkaJSTimeout',
  'KafkaJSMetadataNotLoaded',
  'KafkaJSStaleTopicMetadataAssignment',
]);

/** A kafkajs failure of `what`, as the bus reports it. */
export function wrapKafkaError(what: string, err: unknown): Error {
  if (err instanceof DependencyError) return err;
  const e = err as { name?: string; retriable?: boolean };
  if ((e?.name && DEPENDENCY_ERRORS.has(e.name)) || e?.retriable === true) {
    return new DependencyError('kafka', `${what}: ${errorMessage(err)}`, { cause: err });
  }
  return err instanceof Error ? err : new Error(String(err));
}

/** Runs a kafkajs call; broker-side failures become DependencyError (retryable). */
export async function kafkaCall<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw wrapKafkaError(what, err);
  }
}
