import type { Upcaster } from '../shared/upcasting.js';
import { EVENTS_WITH_NODE_DATA, mapFlowEventNodeData, sealClearSecrets } from './secrets.js';

/**
 * Version 1 of the events that carry node data (the flow's, and the snapshot in RunRequested) may
 * hold node secrets in clear (written before sealing existed); version 2 never does. Sealing needs the key, so these upcasters are
 * made with the sealer's `seal` by the composition root. An event already sealed passes through
 * unchanged; the log itself is re-written only by the reseal operation (README "Security").
 */
export const FLOW_SECRETS_SCHEMA_VERSION = 2;

export function flowSecretUpcasters(sealBox: (plaintext: string) => string): Upcaster[] {
  return EVENTS_WITH_NODE_DATA.map((type) => ({
    type,
    fromVersion: FLOW_SECRETS_SCHEMA_VERSION - 1,
    upcast: (data: unknown) => mapFlowEventNodeData(type, data, (nodeData) => sealClearSecrets(nodeData, sealBox)),
  }));
}
