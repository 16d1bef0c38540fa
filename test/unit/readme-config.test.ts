/**
 * The README's configuration tables name every variable the service reads (infra/config/index.ts is the
 * one place that reads them): a variable added without its row fails here, with the list.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { configSchema } from '../../infra/config/index.js';

const readme = readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8');

describe('README configuration', () => {
  it('documents every environment variable of the config schema', () => {
    const missing = Object.keys(configSchema.shape).filter((name) => !readme.includes(`\`${name}\``));
    expect(missing, `variables without a README row: ${missing.join(', ')}`).to.deep.equal([]);
  });
});
