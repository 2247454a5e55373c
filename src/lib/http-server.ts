import { createServer, type RequestListener, type Server } from 'node:http';
import type { Duplex } from 'node:stream';

// Node's parser refuses some requests before express sees them (headers over `maxHeaderSize`,
// malformed request lines) and by default answers with an empty body. Our contract is a JSON
// {detail} on every error, so the server writes those answers itself.
const PARSER_ANSWERS: Record<string, [number, string, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', 'Request header fields too large'],
  HPE_REQUEST_TIMEOUT: [408, 'Request Timeout', 'Request timeout'],
};
const BAD_REQUEST: [number, string, string] = [400, 'Bad Request', 'Malformed request'];

export function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, reason, detail] = PARSER_ANSWERS[err.code ?? ''] ?? BAD_REQUEST;
  const body = JSON.stringify({ detail });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * The accept queue asked of the kernel (which caps it at net.core.somaxconn). Node's default, 511,
 * overflows when a burst of integrators' connections arrives while the event loop is busy: the kernel
 * then drops the handshakes it cannot queue and the callers see connection resets, not an answer
 * (2,000 verifications opened at once reset some tens of them). A queued connection costs a few
 * hundred bytes of kernel memory.
 */
export const LISTEN_BACKLOG = 4096;

/** An HTTP server for the app whose parser-level refusals are JSON too. */
export function createHttpServer(app: RequestListener): Server {
  const server = createServer(app);
  server.on('clientError', answerClientError);
  return server;
}
