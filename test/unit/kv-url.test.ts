import { expect } from 'chai';
import { DomainError } from '../../domain/shared/decider.js';
import { KV_PRESETS, maskRedisUrl, parseRedisUrl } from '../../domain/kv/index.js';
import { serverRedisLaunch } from '../../infra/kv/server-redis.js';
import { httpStatusOf } from '../../api/errors.js';

function invalid(url: string): DomainError {
  try {
    parseRedisUrl(url);
  } catch (err) {
    expect(err).to.be.instanceOf(DomainError);
    return err as DomainError;
  }
  throw new Error(`${url} was accepted`);
}

describe('Key-value store URLs', () => {
  it('parses host, port, TLS, database and credentials', () => {
    expect(parseRedisUrl('redis://127.0.0.1:6379')).to.deep.include({ host: '127.0.0.1', port: 6379, tls: false, db: 0, username: undefined, password: undefined });
    expect(parseRedisUrl('rediss://cache.example.com:6380/2')).to.deep.include({ host: 'cache.example.com', port: 6380, tls: true, db: 2 });
    expect(parseRedisUrl('redis://:p%40ss@h')).to.deep.include({ host: 'h', port: 6379, password: 'p@ss', username: undefined });
    expect(parseRedisUrl('redis://alice:pw@[::1]:7000')).to.deep.include({ host: '::1', port: 7000, username: 'alice', password: 'pw' });
  });
  it('masks the password, keeps the user', () => {
    expect(parseRedisUrl('redis://alice:pw@h:1/0').masked).to.equal('redis://alice:****@h:1/0');
    expect(maskRedisUrl('rediss://:secret@h')).to.equal('rediss://:****@h');
    expect(maskRedisUrl('redis://h:6379')).to.equal('redis://h:6379');
  });
  it('refuses malformed URLs with KV_INVALID_URL naming body.url', () => {
    for (const url of ['', 'nope', 'http://h:6379', 'redis://', 'redis://h:0', 'redis://h/x', 'redis://h#frag', 'redis://%zz:pw@h']) {
      const err = invalid(url);
      expect(err.code, url).to.equal('KV_INVALID_URL');
      expect(httpStatusOf(err)).to.equal(400);
      expect(err.details).to.deep.include({ field: 'body.url' });
    }
    expect(invalid('redis://:topsecret@h/x').message).not.to.include('topsecret');
  });
});

describe('Key-value store presets and launch', () => {
  it('offers local, TLS and password presets with parseable templates once filled', () => {
    expect(KV_PRESETS.map((p) => p.id)).to.include.members(['local', 'tls', 'password']);
    for (const preset of KV_PRESETS) {
      const filled = preset.urlTemplate.replace('<host>', 'cache.example.com').replace('<password>', 'pw').replace('<username>', 'u');
      expect(() => parseRedisUrl(filled), preset.id).not.to.throw();
      expect(parseRedisUrl(filled).tls).to.equal(preset.tls);
    }
  });
  it('launches server-redis with the URL in the env, not in the args', () => {
    const launch = serverRedisLaunch('redis://:pw@h:6379');
    expect(launch.command).to.equal(process.execPath);
    expect(launch.env).to.deep.equal({ REDIS_URL: 'redis://:pw@h:6379' });
    expect(launch.args.join(' ')).not.to.include('pw@');
    expect(launch.args.join(' ')).to.include('server-redis');
  });
});
