import { expect } from 'chai';
import { insecureAllowed, reasonOf, SocialConfigurationError, socialProvider } from '../../infra/auth/social/index.js';
import { loadConfig } from '../../infra/config/index.js';

describe('social sign-in providers', () => {
  it('is configured only with a client id and secret', () => {
    expect(socialProvider(loadConfig({}), 'google')).to.equal(null);
    expect(socialProvider(loadConfig({ GITHUB_CLIENT_ID: 'id' }), 'github')).to.equal(null);
    expect(socialProvider(loadConfig({ GOOGLE_CLIENT_ID: 'id', GOOGLE_CLIENT_SECRET: 's' }), 'google')?.name).to.equal('google');
    expect(socialProvider(loadConfig({ GITHUB_CLIENT_ID: 'id', GITHUB_CLIENT_SECRET: 's' }), 'github')?.name).to.equal('github');
  });

  it('allows plain http for loopback endpoints only', () => {
    expect(insecureAllowed(['https://accounts.google.com'])).to.equal(false);
    expect(insecureAllowed(['http://127.0.0.1:4000', 'http://localhost:4001/x'])).to.equal(true);
    expect(() => insecureAllowed(['https://github.com/login', 'http://evil.example/token'])).to.throw(SocialConfigurationError);
    const config = loadConfig({ GITHUB_CLIENT_ID: 'id', GITHUB_CLIENT_SECRET: 's', GITHUB_TOKEN_URL: 'http://tokens.example/t' });
    expect(() => socialProvider(config, 'github')).to.throw(SocialConfigurationError);
  });

  it('reduces any failure to a short storable reason', () => {
    expect(reasonOf({ error: 'invalid_grant', error_description: 'free text' })).to.equal('invalid_grant');
    expect(reasonOf(Object.assign(new Error('x'), { code: 'OAUTH_INVALID_RESPONSE', cause: { body: { error: 'bad_verification_code' } } }))).to.equal(
      'bad_verification_code',
    );
    expect(reasonOf(Object.assign(new Error('x'), { code: 'OAUTH_JWT_CLAIM_COMPARISON_FAILED' }))).to.equal('OAUTH_JWT_CLAIM_COMPARISON_FAILED');
    expect(reasonOf(new TypeError('fetch failed'))).to.equal('TypeError');
    expect(reasonOf({ error: 'a b<script>'.repeat(20) }).length).to.be.at.most(80);
  });
});
