import type { CliTokenEvent, CliTokenSource, DeviceAuthorizationEvent, DeviceAuthorizationStatus } from '../domain/cli/index.js';
import type { RecordedEvent } from '../domain/shared/events.js';
import type { Doc, ReadStore } from '../ports/read-store.js';
import { CREDENTIAL_COLLECTIONS, insertCredential, insertIfAbsent, revokeCredential, type SecretCredentialView } from './users-auth.js';
import { type Projector, ownedCollections } from './projector.js';

/** `cli_tokens`: the shape the authenticator reads for `fcli_` bearer tokens, plus what a person wants to see. */
export interface CliTokenView extends SecretCredentialView {
  name: string | null;
  source: CliTokenSource;
  deviceId: string | null;
  createdAt: string;
  version: number;
}

/** `device_codes`: finds a device authorization by the hash of the user code a person typed. */
export interface DeviceCodeView extends Doc {
  userCodeHash: string;
  clientName: string | null;
  status: DeviceAuthorizationStatus;
  decidedBy: string | null;
  redeemed: boolean;
  requestedAt: string;
  expiresAt: string;
  version: number;
}

const TOKENS = CREDENTIAL_COLLECTIONS.cliTokens;
const DEVICES = 'device_codes';

// Creation events are revision 0 and inserted only if absent, later ones are guarded by the
// revision: a redelivered event never overwrites what came after it.
const cliTokensProjector: Projector = {
  name: 'cli_tokens',
  categories: ['clitoken'],
  ...ownedCollections({ [TOKENS]: [{ keys: { userId: 1, createdAt: -1 } }] }),
  async project(recorded, store) {
    const event = recorded as RecordedEvent & CliTokenEvent;
    const tokens = store.collection<CliTokenView>(TOKENS);
    switch (event.type) {
      case 'CliTokenCreated': {
        const d = event.data;
        await insertCredential(tokens, {
          _id: d.tokenId,
          userId: d.userId,
          secretHash: d.secretHash,
          expiresAt: d.expiresAt,
          name: d.name,
          source: d.source,
          deviceId: d.deviceId,
          createdAt: d.createdAt,
          version: recorded.revision,
        });
        return;
      }
      case 'CliTokenRevoked':
        await revokeCredential(tokens, event.data.tokenId, event.data.revokedAt, recorded.revision);
        return;
    }
  },
};

const deviceCodesProjector: Projector = {
  name: 'device_codes',
  categories: ['devicecode'],
  // The reservation of each code makes it unique; the index makes the lookup cheap.
  ...ownedCollections({ [DEVICES]: [{ keys: { userCodeHash: 1 }, unique: true }] }),
  async project(recorded, store) {
    const event = recorded as RecordedEvent & DeviceAuthorizationEvent;
    const devices = store.collection<DeviceCodeView>(DEVICES);
    const id = recorded.streamId.slice('devicecode-'.length);
    const later = (set: Partial<DeviceCodeView>) => devices.updateOne({ _id: id, version: { $lt: recorded.revision } }, { $set: { ...set, version: recorded.revision } });
    switch (event.type) {
      case 'DeviceAuthorizationRequested': {
        const d = event.data;
        const doc: DeviceCodeView = {
          _id: id,
          userCodeHash: d.userCodeHash,
          clientName: d.clientName,
          status: 'pending',
          decidedBy: null,
          redeemed: false,
          requestedAt: d.requestedAt,
          expiresAt: d.expiresAt,
          version: recorded.revision,
        };
        await insertIfAbsent(devices, doc);
        return;
      }
      case 'DeviceAuthorizationApproved':
        await later({ status: 'approved', decidedBy: event.data.userId });
        return;
      case 'DeviceAuthorizationDenied':
        await later({ status: 'denied', decidedBy: event.data.userId });
        return;
      case 'DeviceAuthorizationRedeemed':
        await later({ redeemed: true });
        return;
    }
  },
};

export const cliProjectors: Projector[] = [cliTokensProjector, deviceCodesProjector];

export const findCliToken = (store: ReadStore, tokenId: string) => store.collection<CliTokenView>(TOKENS).findOne({ _id: tokenId });
export const findDeviceCodeByUserCodeHash = (store: ReadStore, userCodeHash: string) =>
  store.collection<DeviceCodeView>(DEVICES).findOne({ userCodeHash });
