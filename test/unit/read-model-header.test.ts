import { expect } from 'chai';
import { readModelAfter } from '../../api/app.js';

describe('X-Read-Model of an answer that settled several streams', () => {
  it('is current only when every settle was in time', () => {
    expect(readModelAfter(undefined, true)).to.equal('current');
    expect(readModelAfter(undefined, false)).to.equal('pending');
    expect(readModelAfter('current', true)).to.equal('current');
    expect(readModelAfter('current', false)).to.equal('pending');
    // A later stream in time does not hide an earlier one that was not (a sync run, then its node history).
    expect(readModelAfter('pending', true)).to.equal('pending');
  });
});
