import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { errorBody } from '../errors.js';

/** What Node's HTTP parser refuses before any middleware runs, answered with our error body. */
const ANSWERS: Record<string, [number, string, string, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', 'HEADERS_TOO_LARGE', 'the request headers are larger than the limit'],
  HPE_HEADERS_TIMEOUT: [408, 'Request Timeout', 'REQUEST_TIMEOUT', 'the request headers did not arrive in time'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'REQUEST_TIMEOUT', 'the request did not arrive in time'],
  HPE_INVALID_METHOD: [400, 'Bad Request', 'INVALID_METHOD', 'the request method is not an HTTP method'],
};

/**
 * Node answers requests its parser refuses (headers over the limit, a malformed request line or
 * header, unknown method tokens, timeouts) with bare text; this answers them with the service's
 * JSON error body and closes the connection. Call on every HTTP server serving the app.
 */
export function answerClientErrors(server: Server): Server {
  server.on('clientError', (err: NodeJS.ErrnoException & { bytesParsed?: number }, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const [status, reason, code, message] = ANSWERS[err.code ?? ''] ?? [400, 'Bad Request', 'MALFORMED_REQUEST', 'the request is not valid HTTP/1.1'];
    const body = JSON.stringify(errorBody(code, message));
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
  return server;
}
