import { expect } from 'chai';
import { DevicePollTracker, generateUserCode } from '../../commands/cli.js';
import { formatUserCode, isWellFormedUserCode, normalizeUserCode, USER_CODE_ALPHABET, userCodeFromIndexes } from '../../domain/cli/index.js';

describe('device user codes', () => {
  it('are 8 characters of BCDFGHJKLMNPQRSTVWXZ, shown XXXX-XXXX', () => {
    for (let i = 0; i < 200; i++) {
      const code = generateUserCode();
      expect(code).to.match(/^[BCDFGHJKLMNPQRSTVWXZ]{8}$/);
      expect(formatUserCode(code)).to.match(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    }
  });

  it('draw every character about equally often (no modulo bias)', () => {
    const counts = new Map<string, number>();
    const codes = 5000;
    for (let i = 0; i < codes; i++) for (const ch of generateUserCode()) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    const expected = (codes * 8) / USER_CODE_ALPHABET.length; // 2000, σ ≈ 44
    expect(counts.size).to.equal(20);
    for (const [ch, n] of counts) expect(Math.abs(n - expected), ch).to.be.below(250);
  });

  it('compare case-insensitively with separators ignored', () => {
    expect(normalizeUserCode('bcdf-ghjk')).to.equal('BCDFGHJK');
    expect(normalizeUserCode(' bcdf ghjk ')).to.equal('BCDFGHJK');
    expect(normalizeUserCode('BcDf.GhJk')).to.equal('BCDFGHJK');
    expect(isWellFormedUserCode('BCDFGHJK')).to.equal(true);
    expect(isWellFormedUserCode('BCDFGHJA'), 'a vowel').to.equal(false);
    expect(isWellFormedUserCode('BCDFGHJ'), 'too short').to.equal(false);
    expect(() => userCodeFromIndexes([0, 1, 2, 3, 4, 5, 6, 20])).to.throw();
  });
});

describe('device poll tracker', () => {
  const at = (s: number) => new Date(Date.parse('2026-01-01T00:00:00Z') + s * 1000).toISOString();

  it('remembers the last poll per device and forgets it once the answer is final', () => {
    const tracker = new DevicePollTracker();
    expect(tracker.get('d1')).to.equal(null);
    tracker.remember('d1', { lastPollAt: at(1), interval: 10 }, at(900));
    expect(tracker.get('d1')).to.deep.equal({ lastPollAt: at(1), interval: 10 });
    tracker.remember('d1', null, at(900));
    expect(tracker.get('d1')).to.equal(null);
  });

  it('stays bounded: expired devices go first, then the oldest', () => {
    const tracker = new DevicePollTracker(3);
    tracker.remember('old', { lastPollAt: at(0), interval: 5 }, at(10));
    tracker.remember('a', { lastPollAt: at(1), interval: 5 }, at(900));
    tracker.remember('b', { lastPollAt: at(2), interval: 5 }, at(900));
    tracker.remember('c', { lastPollAt: at(20), interval: 5 }, at(900));
    expect(tracker.get('old'), 'expired one swept').to.equal(null);
    expect(tracker.size).to.equal(3);
    tracker.remember('d', { lastPollAt: at(21), interval: 5 }, at(900));
    expect(tracker.get('a'), 'oldest live one dropped').to.equal(null);
    expect(tracker.get('d')).to.not.equal(null);
    expect(tracker.size).to.equal(3);
  });
});
