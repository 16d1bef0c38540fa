import { expect } from 'chai';
import { CachedCredentialLookup } from '../../infra/auth/cached-credentials.js';
import type { CredentialLookup, UserAuthView } from '../../ports/credentials.js';

/** A read model of users counted per read, and the head revision of each user's stream. */
function fixture() {
  const docs = new Map<string, UserAuthView & { version?: number }>();
  const heads = new Map<string, number>();
  const reads: string[] = [];
  const inner: CredentialLookup = {
    user: async (id) => {
      reads.push(id);
      const doc = docs.get(id);
      return doc ? { ...doc } : null;
    },
    apiKey: async () => null,
    cliToken: async () => null,
    membership: async () => null,
    organizationExists: async () => true,
    liveWorkspace: async (_orgId: string, workspaceId: string | null) => workspaceId,
  };
  const put = (id: string, version: number | undefined, tokensValidAfter = 0) => {
    docs.set(id, { _id: id, email: `${id}@example.com`, name: id, tokensValidAfter, activeOrgId: null, activeWorkspaceId: null, ...(version === undefined ? {} : { version }) });
  };
  return { docs, heads, reads, inner, put, revision: async (id: string) => heads.get(id) ?? null };
}

describe('CachedCredentialLookup: users read from the read store once while their stream is unchanged', () => {
  it('answers from the cache while the stream head is the revision the document was projected from', async () => {
    const f = fixture();
    f.put('u1', 3);
    f.heads.set('u1', 3);
    const lookup = new CachedCredentialLookup(f.inner, f.revision);
    expect((await lookup.user('u1'))?.email).to.equal('u1@example.com');
    expect((await lookup.user('u1'))?.email).to.equal('u1@example.com');
    expect(f.reads).to.deep.equal(['u1']);
  });

  it('reads the store again once a newer event is in the stream, and answers what the store says', async () => {
    const f = fixture();
    f.put('u1', 3);
    f.heads.set('u1', 3);
    const lookup = new CachedCredentialLookup(f.inner, f.revision);
    await lookup.user('u1');
    // A password change: in the log at once, in the read model a little later.
    f.heads.set('u1', 4);
    expect((await lookup.user('u1'))?.tokensValidAfter).to.equal(0, 'the store has not caught up: its answer, as without the cache');
    f.put('u1', 4, 1_700_000_000);
    expect((await lookup.user('u1'))?.tokensValidAfter).to.equal(1_700_000_000);
    expect((await lookup.user('u1'))?.tokensValidAfter).to.equal(1_700_000_000);
    expect(f.reads).to.deep.equal(['u1', 'u1', 'u1']);
  });

  it('never keeps a user that is missing or whose document has no version', async () => {
    const f = fixture();
    f.put('old', undefined);
    f.heads.set('old', 0);
    const lookup = new CachedCredentialLookup(f.inner, f.revision);
    await lookup.user('ghost');
    await lookup.user('ghost');
    await lookup.user('old');
    await lookup.user('old');
    expect(f.reads).to.deep.equal(['ghost', 'ghost', 'old', 'old']);
  });

  it('holds at most maxEntries users, dropping the oldest first', async () => {
    const f = fixture();
    for (const id of ['a', 'b', 'c']) {
      f.put(id, 0);
      f.heads.set(id, 0);
    }
    const lookup = new CachedCredentialLookup(f.inner, f.revision, 2);
    await lookup.user('a');
    await lookup.user('b');
    await lookup.user('c');
    f.reads.length = 0;
    await lookup.user('c');
    await lookup.user('b');
    await lookup.user('a');
    expect(f.reads).to.deep.equal(['a']);
  });
});
