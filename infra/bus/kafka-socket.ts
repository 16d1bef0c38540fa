import net from 'node:net';
import tls from 'node:tls';
import type { ISocketFactory } from 'kafkajs';

/**
 * kafkajs' default socket factory without Nagle's algorithm. kafkajs leaves Nagle on; a small
 * produce or fetch request written while an earlier one is unacknowledged then waits for the
 * broker's delayed ACK, which put tens of milliseconds into every dispatch (issue 29).
 */
export const noDelaySocketFactory: ISocketFactory = ({ host, port, ssl, onConnect }) => {
  const socket = ssl
    ? tls.connect({ host, port, ...(net.isIP(host) ? {} : { servername: host }), ...ssl }, onConnect)
    : net.connect({ host, port }, onConnect);
  socket.setNoDelay(true);
  socket.setKeepAlive(true, 60_000);
  return socket;
};
