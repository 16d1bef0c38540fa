import { expect } from 'chai';
import { capResourceContents, capToolContent, truncateUtf8 } from '../../infra/mcp/client-limits.js';
import { maskCredentials, McpClientError, toClientError } from '../../infra/mcp/client-errors.js';
import { isStdioCommandAllowed } from '../../domain/mcp/index.js';
import { stdioEnvironment } from '../../infra/mcp/stdio-policy.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';

describe('MCP client: stdio allowlist', () => {
  it('matches an entry exactly', () => {
    expect(isStdioCommandAllowed('/usr/bin/node', ['/usr/bin/node'])).to.equal(true);
    expect(isStdioCommandAllowed('node', ['node'])).to.equal(true);
  });
  it('matches the basename when the entry has no slash', () => {
    expect(isStdioCommandAllowed('/usr/local/bin/node', ['node'])).to.equal(true);
    expect(isStdioCommandAllowed('/usr/local/bin/npx', ['node'])).to.equal(false);
  });
  it('does not match a basename against an entry with a slash', () => {
    expect(isStdioCommandAllowed('/tmp/node', ['/usr/bin/node'])).to.equal(false);
    expect(isStdioCommandAllowed('node', ['/usr/bin/node'])).to.equal(false);
  });
  it('allows nothing with an empty allowlist or an empty command', () => {
    expect(isStdioCommandAllowed('node', [])).to.equal(false);
    expect(isStdioCommandAllowed('', ['node'])).to.equal(false);
    expect(isStdioCommandAllowed('node', [''])).to.equal(false);
    expect(isStdioCommandAllowed('no\0de', ['no\0de'])).to.equal(false);
  });
  it('does not match on prefixes or substrings', () => {
    expect(isStdioCommandAllowed('nodejs', ['node'])).to.equal(false);
    expect(isStdioCommandAllowed('node --inspect', ['node'])).to.equal(false);
  });
});

describe('MCP client: stdio environment', () => {
  it('passes the named variables and a safe minimum, nothing else', () => {
    process.env.SOME_SERVICE_SECRET = 'shh';
    try {
      const env = stdioEnvironment({ API_TOKEN: 'abc' });
      expect(env.API_TOKEN).to.equal('abc');
      expect(env.PATH).to.be.a('string');
      expect(env).not.to.have.property('SOME_SERVICE_SECRET');
      for (const key of Object.keys(env)) expect(['API_TOKEN', 'PATH', 'HOME', 'LANG', 'LC_ALL', 'TMPDIR', 'TZ']).to.include(key);
    } finally {
      delete process.env.SOME_SERVICE_SECRET;
    }
  });
  it('never passes shell function exports', () => {
    const saved = process.env.TZ;
    process.env.TZ = '() { :; }; echo pwned';
    try {
      expect(stdioEnvironment({})).not.to.have.property('TZ');
    } finally {
      if (saved === undefined) delete process.env.TZ;
      else process.env.TZ = saved;
    }
  });
});

describe('MCP client: size caps', () => {
  it('keeps a result under the cap unchanged', () => {
    const content = [{ type: 'text', text: 'hello' }];
    expect(capToolContent(content, { a: 1 }, 1000)).to.deep.equal({ content, structuredContent: { a: 1 }, truncated: false });
  });
  it('shortens text and drops what cannot be shortened, within the cap', () => {
    const content = [
      { type: 'text', text: 'é'.repeat(2000) },
      { type: 'image', data: 'A'.repeat(5000), mimeType: 'image/png' },
    ];
    const capped = capToolContent(content, { big: 'x'.repeat(5000) }, 500);
    expect(capped.truncated).to.equal(true);
    expect(Buffer.byteLength(JSON.stringify({ content: capped.content, structuredContent: capped.structuredContent }))).to.be.at.most(500);
    expect((capped.content[0] as { text: string }).text).to.match(/^é+$/);
    expect(capped.structuredContent).to.equal(undefined);
    expect(JSON.stringify(capped.content)).to.include('dropped');
  });
  it('cuts UTF-8 on character boundaries', () => {
    expect(truncateUtf8('aé', 2)).to.equal('a');
    expect(truncateUtf8('😀😀', 5)).to.equal('😀');
  });
  it('caps resource contents, dropping blobs that do not fit', () => {
    const capped = capResourceContents(
      [
        { uri: 'demo://a', mimeType: 'text/plain', text: 'x'.repeat(1000) },
        { uri: 'demo://b', mimeType: 'application/octet-stream', blob: 'QUJD'.repeat(500) },
      ],
      300,
    );
    expect(capped.truncated).to.equal(true);
    expect(Buffer.byteLength(JSON.stringify(capped.contents))).to.be.at.most(300);
    expect(capped.contents[1]).to.deep.equal({ uri: 'demo://b', mimeType: 'application/octet-stream' });
  });
});

describe('MCP client: errors', () => {
  it('maps SDK errors to stable codes', () => {
    expect(toClientError(new McpError(ErrorCode.RequestTimeout, 'x'), 'calling echo', { timeoutMs: 5 }).code).to.equal('MCP_TIMEOUT');
    expect(toClientError(new McpError(ErrorCode.ConnectionClosed, 'x'), 'calling echo').code).to.equal('MCP_CONNECTION_CLOSED');
    expect(toClientError(new McpError(ErrorCode.InvalidParams, 'bad'), 'calling echo').code).to.equal('MCP_PROTOCOL_ERROR');
    expect(toClientError(new Error('Not connected'), 'calling echo').code).to.equal('MCP_CONNECTION_CLOSED');
    const aborted = new AbortController();
    aborted.abort();
    expect(toClientError(new Error('whatever'), 'calling echo', { signal: aborted.signal }).code).to.equal('MCP_ABORTED');
    expect(toClientError(new McpClientError('MCP_STDIO_NOT_ALLOWED', 'no'), 'x').code).to.equal('MCP_STDIO_NOT_ALLOWED');
  });
  it('masks credentials in URLs quoted by messages', () => {
    expect(maskCredentials('connect redis://user:s3cret@host:6379 failed')).to.equal('connect redis://user:***@host:6379 failed');
    expect(maskCredentials('rediss://:pw@h')).to.equal('rediss://:***@h');
  });
});
