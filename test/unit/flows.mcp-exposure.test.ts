import { expect } from 'chai';
import type { DomainError } from '../../domain/shared/decider.js';
import { flowDecider, OPEN_INPUT_SCHEMA, sanitizeToolName, toolInputSchemaOf, type FlowCommand, type FlowEvent } from '../../domain/flows/index.js';
import { deciderSpec } from '../support/decider-spec.js';

/** SetMcpExposure → FlowMcpExposureSet: a flow as a tool of the service's MCP server (/api/mcp). */
const spec = deciderSpec(flowDecider);
const at = '2026-03-01T00:00:00.000Z';
const fieldsOf = (err: DomainError) => (err.details as { fields: Array<{ field: string }> }).fields.map((f) => f.field);
const created: FlowEvent = {
  type: 'FlowCreated',
  data: { flowId: 'f1', name: 'Flow', description: '', ownerId: 'u1', orgId: 'o1', workspaceId: 'w1', nodes: [], edges: [], createdAt: at },
};
const expose = (extra: Partial<Extract<FlowCommand, { type: 'SetMcpExposure' }>> = {}): FlowCommand => ({
  type: 'SetMcpExposure',
  enabled: true,
  toolName: 'greet',
  description: null,
  inputSchema: null,
  at,
  ...extra,
});

describe('flow decider: MCP exposure', () => {
  it('records the whole setting; the same setting again is no event; state.mcp follows', () => {
    const out = spec.given([created]).when(expose({ inputSchema: { type: 'object', properties: { who: { type: 'string' } } } })).events();
    expect(out).to.deep.equal([
      { type: 'FlowMcpExposureSet', data: { enabled: true, toolName: 'greet', description: null, inputSchema: { type: 'object', properties: { who: { type: 'string' } } }, at } },
    ]);
    spec.given([created, ...out]).when(expose({ inputSchema: { type: 'object', properties: { who: { type: 'string' } } } })).then([]);
    const off = spec.given([created, ...out]).when(expose({ enabled: false, inputSchema: { type: 'object', properties: { who: { type: 'string' } } } })).events();
    expect(spec.stateOf([created, ...out, ...off]).mcp).to.include({ enabled: false, toolName: 'greet' });
    expect(spec.stateOf([created]).mcp).to.equal(null);
  });

  it('refuses a bad tool name or a schema that is not an object schema, naming the field', () => {
    expect(fieldsOf(spec.given([created]).when(expose({ toolName: 'has space' })).thenThrows('VALIDATION_FAILED', 'invalid'))).to.deep.equal(['body.toolName']);
    expect(fieldsOf(spec.given([created]).when(expose({ inputSchema: { type: 'string' } })).thenThrows('VALIDATION_FAILED', 'invalid'))).to.deep.equal(['body.inputSchema.type']);
  });

  it("another tenant's flow and a deleted one are FLOW_NOT_FOUND", () => {
    spec.given([created]).when(expose({ scope: { userId: 'u2', orgId: 'o2', workspaceId: 'w2' } })).thenThrows('FLOW_NOT_FOUND', 'not_found');
    spec.given([created, { type: 'FlowDeleted', data: { at } }]).when(expose()).thenThrows('FLOW_NOT_FOUND', 'not_found');
  });

  it('sanitizes flow names into tool names; the input schema is the trigger\'s, else the given one, else any object', () => {
    expect(sanitizeToolName('Greet someone!', 'f1')).to.equal('Greet_someone');
    expect(sanitizeToolName('  ünïcode · flow  ', 'f1')).to.equal('unicode_flow');
    expect(sanitizeToolName('!!!', 'abc-123')).to.equal('flow_abc123');
    expect(sanitizeToolName('x'.repeat(100), 'f1')).to.have.length(64);
    const given = { type: 'object', properties: { a: {} } };
    expect(toolInputSchemaOf({ type: 'object', required: ['b'] }, given)).to.deep.equal({ type: 'object', required: ['b'] });
    expect(toolInputSchemaOf(null, given)).to.equal(given);
    expect(toolInputSchemaOf({ type: 'array' }, null)).to.deep.equal(OPEN_INPUT_SCHEMA);
  });
});
