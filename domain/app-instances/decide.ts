import { DomainError, decideByType } from '../shared/decider.js';
import { APP_INSTANCE_LIMITS, type AppInstanceEvent, type AppInstanceType, type DataOp, type InstanceFile, type JsonObject, type MessageRole } from './events.js';
import { applyDataOps, fieldOfPointer, jsonBytes, protoKeyPath } from './json-ops.js';
import type { AppInstanceState } from './state.js';
import { APP_INSTANCE_TYPES, isAppInstanceType } from './types.js';

/**
 * Commands of an instance. The data arrives already checked against the type's JSON Schema (by the
 * command handler, which holds the validator); the decider checks what it can purely: the type
 * exists, sizes, the type's invariants, `__proto__` keys, and that a patch replays on the state.
 */
export type AppInstanceCommand =
  | {
      type: 'CreateAppInstance';
      instanceId: string;
      instanceType: string;
      name: string;
      appId: string | null;
      ownerId: string;
      orgId: string | null;
      workspaceId: string | null;
      data: JsonObject;
      linkedFlowIds: string[];
      createdBy: string | null;
      at: string;
    }
  | { type: 'ReplaceAppInstance'; name: string; appId: string | null; data: JsonObject; linkedFlowIds: string[]; by: string | null; at: string }
  | { type: 'PatchAppInstanceData'; format: 'merge-patch' | 'json-patch'; ops: DataOp[]; by: string | null; at: string }
  | { type: 'AddAppInstanceFile'; file: InstanceFile }
  | { type: 'RemoveAppInstanceFile'; path: string; by: string | null; at: string }
  | { type: 'AddAppInstanceMessage'; messageId: string; role: MessageRole; content: string; by: string | null; at: string }
  | { type: 'DeleteAppInstance'; by: string | null; at: string };

export const appInstanceNotFound = () => new DomainError('APP_INSTANCE_NOT_FOUND', 'app instance not found', 'not_found');

function live(state: AppInstanceState): AppInstanceState {
  if (!state.exists || state.deleted) throw appInstanceNotFound();
  return state;
}

const tooLarge = (code: string, what: string, size: number, limit: number, field: string) =>
  new DomainError(code, `${what} is ${size} bytes; the limit is ${limit}`, 'too_large', { field, size, limit });

/** Size, `__proto__` keys and the type's invariants of the data an instance would hold. */
export function checkInstanceData(type: AppInstanceType, data: JsonObject): void {
  const size = jsonBytes(data);
  if (size > APP_INSTANCE_LIMITS.dataBytes) throw tooLarge('DATA_TOO_LARGE', 'the data', size, APP_INSTANCE_LIMITS.dataBytes, 'data');
  const proto = protoKeyPath(data);
  if (proto !== null) throw dataProblems([{ pointer: proto, message: 'a member named __proto__ is not allowed' }]);
  const problems = APP_INSTANCE_TYPES[type].invariants(data);
  if (problems.length > 0) throw dataProblems(problems);
}

/** 400 DATA_SCHEMA_VIOLATION naming each place: `{field: 'data.cards.0.title', pointer: '/cards/0/title', message}`. */
export function dataProblems(problems: Array<{ pointer: string; message: string }>): DomainError {
  const fields = problems.slice(0, 20).map((p) => ({ field: fieldOfPointer(p.pointer), pointer: p.pointer, message: p.message }));
  const first = fields[0];
  return new DomainError('DATA_SCHEMA_VIOLATION', `the data does not match its type: ${first.field} ${first.message}`, 'invalid', { fields });
}

function checkWrite(what: string, value: unknown, field: string) {
  const size = jsonBytes(value);
  if (size > APP_INSTANCE_LIMITS.writeBytes) throw tooLarge('WRITE_TOO_LARGE', `${what} written at once`, size, APP_INSTANCE_LIMITS.writeBytes, field);
}

function duplicateFlows(linkedFlowIds: string[]) {
  if (new Set(linkedFlowIds).size !== linkedFlowIds.length) throw new DomainError('VALIDATION_FAILED', 'linkedFlowIds lists a flow twice', 'invalid', { fields: [{ field: 'body.linkedFlowIds', message: 'must not repeat a flow' }] });
}

export const decideAppInstance = decideByType<AppInstanceCommand, AppInstanceState, AppInstanceEvent>({
  CreateAppInstance(command, state) {
    if (state.exists) throw new DomainError('APP_INSTANCE_EXISTS', 'an app instance with this id exists', 'conflict');
    if (!isAppInstanceType(command.instanceType)) {
      throw new DomainError('UNKNOWN_INSTANCE_TYPE', `unknown instance type ${JSON.stringify(command.instanceType)}; known: ${Object.keys(APP_INSTANCE_TYPES).join(', ')}`, 'invalid', {
        fields: [{ field: 'body.type', message: `must be one of ${Object.keys(APP_INSTANCE_TYPES).join(', ')}` }],
      });
    }
    checkInstanceData(command.instanceType, command.data);
    checkWrite('the data', command.data, 'data');
    duplicateFlows(command.linkedFlowIds);
    const { type: _t, instanceType, ...rest } = command;
    return [{ type: 'AppInstanceCreated', data: { ...rest, type: instanceType } }];
  },
  ReplaceAppInstance(command, state) {
    live(state);
    checkInstanceData(state.type, command.data);
    checkWrite('the data', command.data, 'data');
    duplicateFlows(command.linkedFlowIds);
    const { type: _t, ...data } = command;
    return [{ type: 'AppInstanceReplaced', data }];
  },
  PatchAppInstanceData(command, state) {
    live(state);
    if (command.ops.length === 0) return [];
    checkWrite('the change', command.ops, 'body');
    const next = applyDataOps(state.data, command.ops);
    if (next === null || typeof next !== 'object' || Array.isArray(next)) {
      throw dataProblems([{ pointer: '', message: 'must be an object' }]);
    }
    checkInstanceData(state.type, next);
    const { type: _t, ...data } = command;
    return [{ type: 'AppInstanceDataPatched', data }];
  },
  AddAppInstanceFile(command, state) {
    live(state);
    const replacing = state.files.some((f) => f.path === command.file.path);
    if (!replacing && state.files.length >= APP_INSTANCE_LIMITS.files) {
      throw new DomainError('TOO_MANY_FILES', `an instance holds at most ${APP_INSTANCE_LIMITS.files} files`, 'conflict', { limit: APP_INSTANCE_LIMITS.files });
    }
    return [{ type: 'AppInstanceFileAdded', data: command.file }];
  },
  RemoveAppInstanceFile(command, state) {
    live(state);
    if (!state.files.some((f) => f.path === command.path)) return [];
    return [{ type: 'AppInstanceFileRemoved', data: { path: command.path, by: command.by, at: command.at } }];
  },
  AddAppInstanceMessage(command, state) {
    live(state);
    if (state.conversation.some((m) => m.messageId === command.messageId)) return [];
    if (state.conversation.length >= APP_INSTANCE_LIMITS.messages) {
      throw new DomainError('CONVERSATION_FULL', `an instance's conversation holds at most ${APP_INSTANCE_LIMITS.messages} messages`, 'conflict', { limit: APP_INSTANCE_LIMITS.messages });
    }
    const { type: _t, ...data } = command;
    return [{ type: 'AppInstanceMessageAdded', data }];
  },
  DeleteAppInstance(command, state) {
    if (!state.exists) throw appInstanceNotFound();
    if (state.deleted) return [];
    return [{ type: 'AppInstanceDeleted', data: { by: command.by, at: command.at } }];
  },
});
