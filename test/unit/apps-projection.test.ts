import { expect } from 'chai';
import { EMPTY_CONTRACT, type AppEvent } from '../../domain/apps/index.js';
import { APPS, appsProjector, listApps } from '../../projections/apps.js';
import { projectionSpec, type GivenEvent } from '../support/projection-spec.js';

const t0 = '2026-01-01T00:00:00.000Z';
const t1 = '2026-01-02T00:00:00.000Z';
const t2 = '2026-01-03T00:00:00.000Z';
const on = (event: AppEvent, streamId = 'app-a1'): GivenEvent => ({ streamId, event });
const created = (appId: string, ownerId = 'u1', at = t0) =>
  on({ type: 'AppCreated', data: { appId, name: `App ${appId}`, description: '', contract: EMPTY_CONTRACT, ownerId, orgId: null, workspaceId: null, by: ownerId, at } }, `app-${appId}`);
const ref = (path: string, size: number) => ({ path, encoding: 'utf8' as const, sha256: 'a'.repeat(64), size });

describe('apps projector', () => {
  it('keeps a summary per app: files and bytes, linked flow, versions, tombstone on delete', async () => {
    await projectionSpec([appsProjector])
      .given([
        created('a1'),
        on({ type: 'AppFilesChanged', data: { appId: 'a1', put: [{ ...ref('index.html', 5), content: 'hello' }, { ...ref('a.js', 2), content: '12' }], deleted: [], source: 'api', by: 'u1', at: t1 } }),
        on({ type: 'AppFlowLinked', data: { appId: 'a1', flowId: 'f1', previousFlowId: null, by: 'u1', at: t1 } }),
        on({ type: 'AppVersionCreated', data: { appId: 'a1', versionId: 'v1', number: 1, label: null, files: [ref('index.html', 5), ref('a.js', 2)], contract: EMPTY_CONTRACT, flowId: 'f1', flowVersion: 3, by: 'u1', at: t1 } }),
        on({ type: 'AppFilesChanged', data: { appId: 'a1', put: [{ ...ref('b.js', 10), content: '0123456789' }], deleted: ['a.js'], source: 'builder', by: 'u1', at: t2 } }),
        on({ type: 'AppFlowUnlinked', data: { appId: 'a1', previousFlowId: 'f1', by: 'u1', at: t2 } }),
        created('a2', 'u1', t1),
        on({ type: 'AppDeleted', data: { appId: 'a2', by: 'u1', at: t2 } }, 'app-a2'),
        created('a3', 'u2', t1),
      ])
      .then(async (store) => {
        const a1 = await store.collection(APPS).findOne({ _id: 'a1' });
        expect(a1).to.deep.include({ name: 'App a1', fileCount: 2, totalBytes: 15, flowId: null, versionCount: 1, deleted: false, version: 5, createdAt: t0, updatedAt: t2 });
        const page = await listApps(store, { userId: 'u1', orgId: null, workspaceId: null }, { limit: 10 });
        expect(page.items.map((d) => d._id), 'the deleted app and another user\'s are not listed').to.deep.equal(['a1']);
      });
  });

  it('a restore sets the files, size and linked flow of the snapshot', async () => {
    await projectionSpec([appsProjector])
      .given([
        created('a1'),
        on({ type: 'AppFilesChanged', data: { appId: 'a1', put: [{ ...ref('x.js', 3), content: 'abc' }], deleted: [], source: 'api', by: 'u1', at: t1 } }),
        on({ type: 'AppVersionRestored', data: { appId: 'a1', versionId: 'v1', files: [ref('index.html', 7), ref('y.css', 1)], contract: EMPTY_CONTRACT, flowId: 'f9', by: 'u1', at: t2 } }),
      ])
      .thenDocuments(APPS, [{ _id: 'a1', fileCount: 2, totalBytes: 8, flowId: 'f9', version: 2 }]);
  });
});
