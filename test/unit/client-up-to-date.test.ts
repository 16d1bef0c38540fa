import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GENERATE_COMMAND, GENERATED_FILES, clientDir, generateClient } from '../../scripts/generate-client.js';

/** The checked-in client (`client/openapi.json`, `client/schema.d.ts`) is what the route table generates now. */
describe('generated client is up to date', function () {
  this.timeout(120_000);
  let fresh: string;
  before(async () => {
    fresh = await mkdtemp(join(tmpdir(), 'flow-client-'));
    await generateClient(fresh);
  });
  after(async () => {
    if (fresh) await rm(fresh, { recursive: true, force: true });
  });

  for (const name of GENERATED_FILES) {
    it(`client/${name} matches a fresh generation`, async () => {
      const path = join(clientDir, name);
      expect(existsSync(path), `client/${name} is missing: run ${GENERATE_COMMAND}`).to.equal(true);
      const expected = await readFile(join(fresh, name), 'utf8');
      const actual = readFileSync(path, 'utf8');
      if (actual === expected) return;
      const a = actual.split('\n');
      const e = expected.split('\n');
      let line = 0;
      while (line < Math.min(a.length, e.length) && a[line] === e[line]) line++;
      expect.fail(
        `client/${name} is stale (the route table or api/openapi.ts changed): run \`${GENERATE_COMMAND}\` and commit the result.\n` +
          `first difference at line ${line + 1}:\n  checked in: ${a[line] ?? '<end of file>'}\n  generated:  ${e[line] ?? '<end of file>'}`,
      );
    });
  }

  it('generates deterministically (two runs give the same bytes)', async () => {
    const again = await mkdtemp(join(tmpdir(), 'flow-client-'));
    try {
      await generateClient(again);
      for (const name of GENERATED_FILES) expect(await readFile(join(again, name), 'utf8'), name).to.equal(await readFile(join(fresh, name), 'utf8'));
    } finally {
      await rm(again, { recursive: true, force: true });
    }
  });

  it('types every operation of the document', async () => {
    const doc = JSON.parse(await readFile(join(fresh, 'openapi.json'), 'utf8')) as { paths: Record<string, Record<string, { operationId?: string }>> };
    const types = await readFile(join(fresh, 'schema.d.ts'), 'utf8');
    const ids = Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op.operationId));
    expect(ids.length).to.be.greaterThan(50);
    const missing = ids.filter((id) => !id || !types.includes(`    ${JSON.stringify(id).slice(1, -1)}: {`));
    expect(missing, 'operations without generated types').to.deep.equal([]);
  });
});
