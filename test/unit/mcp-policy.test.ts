import { expect } from 'chai';
import { checkEndpointPolicy } from '../../commands/mcp.js';
import {
  checkMcpUrlAddresses,
  connectStaleBefore,
  isMcpRequestExpired,
  MCP_EXPIRY_MARGIN_MS,
  mayBeReplayed,
  mcpUrlHost,
  type PlainEndpoint,
} from '../../domain/mcp/index.js';
import { DomainError } from '../../domain/shared/decider.js';
import type { AddressResolver } from '../../ports/address-resolver.js';

const T0 = new Date('2026-01-01T00:00:00.000Z');
const later = (ms: number) => new Date(T0.getTime() + ms);

function rejection(f: () => unknown): DomainError {
  try {
    f();
  } catch (err) {
    expect(err).to.be.instanceOf(DomainError);
    return err as DomainError;
  }
  return expect.fail('expected a DomainError') as never;
}

async function asyncRejection(p: Promise<unknown>): Promise<DomainError> {
  try {
    await p;
  } catch (err) {
    expect(err).to.be.instanceOf(DomainError);
    return err as DomainError;
  }
  return expect.fail('expected a DomainError') as never;
}

describe('MCP outbound rule for server URLs (domain)', () => {
  it('gives the host to resolve; IPv6 without brackets', () => {
    expect(mcpUrlHost('https://mcp.example.com:8443/mcp')).to.equal('mcp.example.com');
    expect(mcpUrlHost('http://[::1]:3000/mcp')).to.equal('::1');
  });

  it('refuses a URL that is not one, not http(s), or carries credentials: invalid, naming body.url', () => {
    for (const [url, message] of [
      ['not a url', 'not a valid URL'],
      ['ftp://example.com/x', 'only http and https URLs can be used'],
      ['https://user:pw@example.com/', 'put credentials in headers, not in the URL'],
    ]) {
      const err = rejection(() => mcpUrlHost(url));
      expect(err).to.include({ code: 'OUTBOUND_INVALID_URL', kind: 'invalid', message });
      expect(err.details).to.deep.equal({ field: 'body.url' });
    }
  });

  it('one non-public address refuses the host: forbidden, with the address class', () => {
    expect(() => checkMcpUrlAddresses('example.com', [{ address: '93.184.216.34', addressClass: 'public' }])).not.to.throw();
    const err = rejection(() =>
      checkMcpUrlAddresses('mixed.example', [
        { address: '93.184.216.34', addressClass: 'public' },
        { address: '10.0.0.1', addressClass: 'private' },
      ]),
    );
    expect(err).to.include({ code: 'OUTBOUND_ADDRESS_REFUSED', kind: 'forbidden' });
    expect(err.details).to.deep.equal({ host: 'mixed.example', addressClass: 'private', field: 'body.url' });
  });
});

describe('MCP endpoint policy (command, resolver as a port)', () => {
  const resolver = (answers: Record<string, Array<{ address: string; addressClass: string }>>): AddressResolver & { asked: string[] } => {
    const asked: string[] = [];
    return {
      asked,
      async resolve(host) {
        asked.push(host);
        const answer = answers[host];
        if (!answer) throw new Error('ENOTFOUND');
        return answer;
      },
    };
  };
  const http = (url: string): PlainEndpoint => ({ name: 'h', transport: 'http', command: null, args: [], env: {}, url, headers: {}, autoReconnect: false });
  const stdio = (command: string): PlainEndpoint => ({ name: 's', transport: 'stdio', command, args: [], env: {}, url: null, headers: {}, autoReconnect: false });
  const config = (allowPrivate: boolean) => ({ MCP_STDIO_ALLOWLIST: ['node'], ALLOW_PRIVATE_NETWORK: allowPrivate });

  it('stdio: the allowlist decides, nothing is resolved', async () => {
    const r = resolver({});
    await checkEndpointPolicy({ config: config(false), resolver: r }, stdio('/usr/bin/node'));
    const err = await asyncRejection(checkEndpointPolicy({ config: config(false), resolver: r }, stdio('bash')));
    expect(err).to.include({ code: 'MCP_STDIO_NOT_ALLOWED', kind: 'forbidden' });
    expect(err.details).to.deep.equal({ field: 'body.command' });
    expect(r.asked).to.deep.equal([]);
  });

  it('http: resolves the host and applies the rule; a host that does not resolve is OUTBOUND_DNS_FAILED', async () => {
    const r = resolver({ 'public.example': [{ address: '93.184.216.34', addressClass: 'public' }], 'local.example': [{ address: '127.0.0.1', addressClass: 'loopback' }] });
    await checkEndpointPolicy({ config: config(false), resolver: r }, http('https://public.example/mcp'));
    const refused = await asyncRejection(checkEndpointPolicy({ config: config(false), resolver: r }, http('http://local.example/mcp')));
    expect(refused).to.include({ code: 'OUTBOUND_ADDRESS_REFUSED', kind: 'forbidden' });
    const unresolved = await asyncRejection(checkEndpointPolicy({ config: config(false), resolver: r }, http('http://nowhere.example/mcp')));
    expect(unresolved).to.include({ code: 'OUTBOUND_DNS_FAILED', kind: 'invalid' });
    expect(unresolved.details).to.deep.equal({ host: 'nowhere.example', field: 'body.url' });
  });

  it('with ALLOW_PRIVATE_NETWORK the URL is still parsed, but nothing is resolved', async () => {
    const r = resolver({});
    await checkEndpointPolicy({ config: config(true), resolver: r }, http('http://127.0.0.1:3000/mcp'));
    expect(r.asked).to.deep.equal([]);
    const err = await asyncRejection(checkEndpointPolicy({ config: config(true), resolver: r }, http('ftp://127.0.0.1/')));
    expect(err.code).to.equal('OUTBOUND_INVALID_URL');
  });
});

describe('MCP expiry rules (time passed in)', () => {
  const requestedAt = T0.toISOString();

  it('a request expires once its timeout and the margin have passed, not before', () => {
    expect(isMcpRequestExpired(requestedAt, 1_000, later(1_000 + MCP_EXPIRY_MARGIN_MS))).to.equal(false);
    expect(isMcpRequestExpired(requestedAt, 1_000, later(1_000 + MCP_EXPIRY_MARGIN_MS + 1))).to.equal(true);
    expect(isMcpRequestExpired(requestedAt, 60_000, later(60_000))).to.equal(false);
  });

  it('only a request older than two seconds may be a replay', () => {
    expect(mayBeReplayed(requestedAt, later(2_000))).to.equal(false);
    expect(mayBeReplayed(requestedAt, later(2_001))).to.equal(true);
  });

  it('a pending connect is stale when made before now minus the connect wait', () => {
    expect(connectStaleBefore(later(35_000), 35_000)).to.equal(requestedAt);
  });
});
