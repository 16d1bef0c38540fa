import { MongoNetworkError, MongoNotConnectedError, MongoServerError, MongoServerSelectionError, MongoTopologyClosedError } from 'mongodb';
import type { UnavailableDependency } from '../../ports/availability.js';

/**
 * FerretDB answers with a server error, not a network error, when PostgreSQL behind it is down or
 * restarting: its message carries the driver's (pgx) connection failure.
 */
const BACKEND_DOWN = /failed to connect|connection refused|conn closed|unexpected EOF|the database system is (shutting down|starting up|in recovery mode)|terminating connection|server closed the connection/i;

/**
 * node-redis's errors when the server is gone or the client gave up, by class name: they leave
 * `name` as "Error", and importing `redis` here would load it in every configuration.
 */
const REDIS_DOWN = new Set(['ClientClosedError', 'ClientOfflineError', 'ConnectionTimeoutError', 'ReconnectStrategyError', 'SocketClosedUnexpectedlyError', 'SocketTimeoutError']);

/** A socket the peer closed or refused; which server it was is read from the driver in the stack. */
const SOCKET_GONE = new Set(['EPIPE', 'ECONNRESET', 'ECONNREFUSED', 'ECONNABORTED', 'ETIMEDOUT']);
const DRIVER_IN_STACK: Array<[RegExp, string]> = [
  [/node_modules\/mongodb\//, 'read store'],
  [/node_modules\/(@redis|redis)\//, 'key-value store'],
  [/node_modules\/kafkajs\//, 'bus'],
];

/** Errors of the drivers our adapters use, each named after the server that did not answer; walks `cause`. */
export const unavailableDependency: UnavailableDependency = (err) => {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    // MongoNetworkError covers the pool being cleared and network timeouts (subclasses).
    if (e instanceof MongoNetworkError || e instanceof MongoServerSelectionError || e instanceof MongoTopologyClosedError || e instanceof MongoNotConnectedError) return 'read store';
    if (e instanceof MongoServerError && BACKEND_DOWN.test(e.message)) return 'read store';
    if (REDIS_DOWN.has((e as object).constructor?.name)) return 'key-value store';
    const name = (e as { name?: unknown }).name;
    if (typeof name === 'string' && /^KafkaJS(Connection|NumberOfRetriesExceeded|BrokerNotFound|RequestTimeout)/.test(name)) return 'bus';
    // The MongoDB driver lets a write on a socket FerretDB just closed escape as a bare EPIPE
    // ("This socket has been ended by the other party"), not as a MongoNetworkError.
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && SOCKET_GONE.has(code)) {
      const stack = String((e as { stack?: unknown }).stack ?? '');
      const driver = DRIVER_IN_STACK.find(([pattern]) => pattern.test(stack));
      if (driver) return driver[1];
    }
  }
  return null;
};
