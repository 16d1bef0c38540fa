import { expect } from 'chai';
import { z } from 'zod';
import {
  CONDITION_OPERATORS,
  FLOW_LIMITS,
  LLM_PROVIDER_MODELS,
  MAX_WRITE_BYTES,
  MAX_EDGES_PER_FLOW,
  MAX_NODES_PER_FLOW,
  MAX_NODE_DATA_BYTES,
  MAX_PROMPT_LENGTH,
  MAX_WEBHOOK_TIMEOUT_MS,
  NODE_TYPES,
  flowDecider,
  idSchema,
  isKnownModel,
  jsonDepth,
  nodeDataSchema,
  nodeInputShape,
  nodeTypeCatalogue,
  validateNode,
  validateNodeData,
  type FlowCommand,
  type FlowEvent,
  type FlowNode,
} from '../../domain/flows/index.js';
import { deciderSpec } from '../support/decider-spec.js';

const at = '2026-03-01T00:00:00.000Z';
const ctx = { nodeIds: ['self', 'other'], selfId: 'self' };
const fields = (data: Record<string, unknown>) => validateNodeData(data, ctx).map((p) => p.field);

const valid: Record<(typeof NODE_TYPES)[number], Record<string, unknown>> = {
  llm: { nodeType: 'llm', llm: 'anthropic', model: 'claude-sonnet-4-0', prompt: 'Say {{inputs.x}}' },
  webhook: { nodeType: 'webhook', webhookConfig: { url: 'https://hooks.example.com/x', method: 'PUT', headers: { 'X-A': '1' }, timeout: 5000 } },
  transform: { nodeType: 'transform', template: '{{previous}}!' },
  condition: { nodeType: 'condition', conditions: [{ operator: 'gt', value: '3', targetNodeId: 'other' }] },
  input: { nodeType: 'input' },
  output: { nodeType: 'output', outputKey: 'answer' },
  delay: { nodeType: 'delay', delayMs: 1000 },
  mcp_tool: { nodeType: 'mcp_tool', mcpServerId: 'srv1', toolName: 'echo', arguments: { message: '{{previous}}' } },
  memory: { nodeType: 'memory', memoryOperation: 'search', query: '{{inputs.question}}', scope: { userId: '{{inputs.user}}' }, filters: { topic: 'food' }, limit: 3 },
  wait_signal: { nodeType: 'wait_signal', signalName: 'approve', timeoutMs: 60000 },
  sleep: { nodeType: 'sleep', durationMs: 2000 },
  set_state: { nodeType: 'set_state', values: { stage: '{{previous}}' } },
  continue_as_new: { nodeType: 'continue_as_new', input: { round: '{{state.round}}' } },
  query: { nodeType: 'query', queryName: 'progress', result: { round: '{{state.round}}' } },
};

describe('node validation', () => {
  for (const type of NODE_TYPES) {
    it(`accepts a valid ${type} node, unknown fields included`, () => {
      expect(validateNodeData({ ...valid[type], somethingElse: [1, { a: null }] }, ctx)).to.deep.equal([]);
    });
  }

  it('accepts data without a nodeType (only the common rules apply) and any offline model', () => {
    expect(validateNodeData({ prompt: '', llm: '', url: '' }, ctx)).to.deep.equal([]);
    expect(validateNodeData({ ...valid.llm, llm: 'offline', model: 'anything-at-all' }, ctx)).to.deep.equal([]);
    expect(isKnownModel('openai', 'gpt-4o')).to.equal(true);
    expect(isKnownModel('openai', 'claude-sonnet-4-0')).to.equal(false);
    expect(isKnownModel('toString', 'x')).to.equal(false);
  });

  const table: Array<[string, Record<string, unknown>, string[]]> = [
    ['not an object', [] as unknown as Record<string, unknown>, ['data']],
    ['an unknown nodeType', { nodeType: 'teleport' }, ['data.nodeType']],
    ['a query without a name or result', { nodeType: 'query' }, ['data.queryName', 'data.result']],
    ['a query name that is not an identifier', { ...valid.query, queryName: 'two words' }, ['data.queryName']],
    ['an llm node without provider, model, prompt', { nodeType: 'llm' }, ['data.llm', 'data.model', 'data.prompt']],
    ['an unknown provider', { ...valid.llm, llm: 'acme' }, ['data.llm']],
    ['a model of another provider', { ...valid.llm, llm: 'google' }, ['data.model']],
    ['a blank prompt', { ...valid.llm, prompt: '   ' }, ['data.prompt']],
    ['a prompt over the limit', { ...valid.llm, prompt: 'x'.repeat(MAX_PROMPT_LENGTH + 1) }, ['data.prompt']],
    ['an unknown operator', { conditions: [{ operator: 'like', value: 'x' }] }, ['data.conditions.0.operator']],
    ['a missing operator', { conditions: [{ value: 'x' }] }, ['data.conditions.0.operator']],
    ['a regex that does not compile', { conditions: [{ operator: 'regex', value: '([a-z' }] }, ['data.conditions.0.value']],
    ['gt with a word', { conditions: [{ operator: 'gt', value: 'many' }] }, ['data.conditions.0.value']],
    ['contains without a value', { conditions: [{ operator: 'contains' }] }, ['data.conditions.0.value']],
    ['a usePrompt condition without a prompt', { conditions: [{ usePrompt: true, prompt: '' }] }, ['data.conditions.0.prompt']],
    ['a target that is no node of the flow', { conditions: [{ operator: 'is_empty', targetNodeId: 'ghost' }] }, ['data.conditions.0.targetNodeId']],
    ['a target that is the node itself', { conditions: [{ operator: 'is_empty', targetNodeId: 'self' }] }, ['data.conditions.0.targetNodeId']],
    ['a webhook without a URL', { nodeType: 'webhook', webhookConfig: {} }, ['data.webhookConfig.url']],
    ['a non-http URL', { nodeType: 'webhook', webhookConfig: { url: 'file:///etc/passwd' } }, ['data.webhookConfig.url']],
    ['a webhook without config', { nodeType: 'webhook' }, ['data.webhookConfig']],
    ['a bad method', { webhookConfig: { url: '', method: 'FETCH' } }, ['data.webhookConfig.method']],
    ['a zero timeout', { webhookConfig: { timeout: 0 } }, ['data.webhookConfig.timeout']],
    ['a fractional timeout', { webhookConfig: { timeout: 1.5 } }, ['data.webhookConfig.timeout']],
    ['a timeout over the maximum', { webhookConfig: { timeout: MAX_WEBHOOK_TIMEOUT_MS + 1 } }, ['data.webhookConfig.timeout']],
    ['variables nested too deep', { variables: { a: { b: { c: { d: { e: { f: 1 } } } } } } }, ['data.variables']],
    ['variables exactly at the depth limit', { variables: { a: { b: { c: { d: { e: 1 } } } } } }, []],
    ['a transform without template', { nodeType: 'transform' }, ['data.template']],
    ['a condition node without conditions', { nodeType: 'condition', conditions: [] }, ['data.conditions']],
    ['a negative delay', { nodeType: 'delay', delayMs: -1 }, ['data.delayMs']],
    ['an mcp tool without server and tool', { nodeType: 'mcp_tool' }, ['data.mcpServerId', 'data.toolName']],
    ['a memory node with an unknown operation', { nodeType: 'memory', memoryOperation: 'wipe' }, ['data.memoryOperation']],
    ['a memory update without memoryId', { nodeType: 'memory', memoryOperation: 'update', text: 'x' }, ['data.memoryId']],
    ['a memory delete naming neither id nor scope', { nodeType: 'memory', memoryOperation: 'delete', scope: {} }, ['data.memoryId']],
    ['a memory node with nested metadata', { nodeType: 'memory', memoryOperation: 'save', metadata: { a: { b: 1 } } }, ['data.metadata.a']],
    ['a wrongly typed seed field', { isAsync: 'yes', startNode: 1 }, ['data.isAsync', 'data.startNode']],
  ];
  for (const [name, data, expected] of table) {
    it(`reports ${expected.join(', ') || 'nothing'} for ${name}`, () => {
      expect(fields(data)).to.have.members(expected);
      expect(fields(data)).to.have.length(expected.length);
    });
  }

  it('reports every problem of a node at once, each once', () => {
    const data = {
      nodeType: 'llm',
      llm: 'openai',
      model: 'gpt-5-ultra',
      prompt: '',
      conditions: [{ operator: 'regex', value: '(' }, { operator: 'bogus' }, { usePrompt: true }, { operator: 'equals', value: 'x', targetNodeId: 'ghost' }],
      webhookConfig: { url: 'ftp://x', method: 'post', timeout: -3 },
    };
    expect(fields(data)).to.deep.equal([
      'data.prompt',
      'data.conditions.0.value',
      'data.conditions.1.operator',
      'data.conditions.2.prompt',
      'data.webhookConfig.url',
      'data.webhookConfig.method',
      'data.webhookConfig.timeout',
      'data.model',
      'data.conditions.3.targetNodeId',
    ]);
  });

  it('says a missing field is required', () => {
    const problems = validateNodeData({ nodeType: 'llm', llm: 'openai', prompt: 'p' }, ctx);
    expect(problems).to.have.length(1);
    expect(problems[0].message).to.match(/^required/);
  });

  it('validates the whole node: renderer type and position too', () => {
    expect(validateNode({ type: 'custom', position: { x: 1, y: 2 }, data: valid.transform }, ctx)).to.deep.equal([]);
    expect(validateNode({ position: { x: 'a' }, data: valid.transform }, ctx).map((p) => p.field)).to.deep.equal(['type', 'position.x', 'position.y']);
    expect(validateNode(null, ctx)).to.have.length(1);
  });

  it('refuses data over the size limit without looking further', () => {
    const problems = validateNodeData({ nodeType: 'bogus', blob: 'x'.repeat(MAX_NODE_DATA_BYTES) }, ctx);
    expect(problems.map((p) => p.field)).to.deep.equal(['data']);
    expect(problems[0].message).to.contain(String(MAX_NODE_DATA_BYTES));
  });

  it('exports the body schemas for routes: data passes through, sizes enforced', () => {
    const body = z.strictObject(nodeInputShape);
    const parsed = body.safeParse({ type: 'custom', position: { x: 0, y: 0 }, data: { ...valid.llm, extra: { deep: true } } });
    expect(parsed.success && parsed.data.data.extra).to.deep.equal({ deep: true });
    expect(nodeDataSchema.safeParse({ blob: 'x'.repeat(MAX_NODE_DATA_BYTES) }).success).to.equal(false);
    expect(body.safeParse({ type: 'custom', position: { x: 0, y: 0 }, data: {}, id: 'x' }).success).to.equal(false);
  });

  it('accepts ids from the usual generators and refuses unsafe ones', () => {
    for (const id of ['n1', 'dndnode_0', 'reactflow__edge-a-b', '3f2b8c1e-8a9d-4c1b-9d7e-1a2b3c4d5e6f', 'a:b']) expect(idSchema.safeParse(id).success, id).to.equal(true);
    for (const id of ['', '__proto__', 'constructor', 'a b', 'a.b', 'a/b', '$x', 'x'.repeat(129)]) expect(idSchema.safeParse(id).success, id).to.equal(false);
  });
});

describe('node type catalogue', () => {
  it('lists every node type with a description and a JSON Schema of its data', () => {
    const catalogue = nodeTypeCatalogue();
    expect(catalogue.map((t) => t.nodeType)).to.deep.equal([...NODE_TYPES]);
    for (const t of catalogue) {
      expect(t.description).to.be.a('string').and.have.length.above(10);
      expect(t.dataSchema).to.include({ type: 'object' });
      expect(t.dataSchema.properties).to.have.property('nodeType');
    }
    const llm = catalogue.find((t) => t.nodeType === 'llm')!.dataSchema as { required: string[]; properties: Record<string, { enum?: string[] }> };
    expect(llm.required).to.have.members(['llm', 'model', 'prompt']);
    expect(llm.properties.llm.enum).to.have.members(Object.keys(LLM_PROVIDER_MODELS));
    const conditions = JSON.stringify(catalogue[0].dataSchema);
    for (const op of CONDITION_OPERATORS) expect(conditions).to.contain(`"${op}"`);
    expect(catalogue.find((t) => t.nodeType === 'webhook')!.dataSchema).to.have.deep.property('required', ['webhookConfig']);
  });
});

describe('flow limits', () => {
  const spec = deciderSpec(flowDecider);
  const created: FlowEvent = {
    type: 'FlowCreated',
    data: { flowId: 'f1', name: 'F', description: '', ownerId: 'u', orgId: null, workspaceId: null, nodes: [], edges: [], createdAt: at },
  };
  const node = (id: string, data: Record<string, unknown> = {}): FlowNode => ({ id, type: 'custom', position: { x: 0, y: 0 }, data });

  it('publishes its numbers', () => {
    expect(FLOW_LIMITS).to.include({ nodesPerFlow: 500, edgesPerFlow: 2000, nameLength: 200, descriptionLength: 2000, promptLength: 100_000, variablesDepth: 5, historyEntriesPerNode: 100 });
    expect(FLOW_LIMITS.nodeDataBytes).to.equal(256 * 1024);
  });

  it('measures nesting depth as documented', () => {
    expect([jsonDepth(1), jsonDepth({}), jsonDepth({ a: 1 }), jsonDepth({ a: { b: [1] } })]).to.deep.equal([0, 1, 1, 3]);
  });

  it('refuses a replacement with too many nodes or edges (LIMIT_EXCEEDED, 400)', () => {
    const nodes = Array.from({ length: MAX_NODES_PER_FLOW + 1 }, (_, i) => node(`n${i}`));
    const err = spec.given([created]).when({ type: 'ReplaceFlow', name: 'F', nodes, edges: [], at }).thenThrows('LIMIT_EXCEEDED', 'invalid');
    expect(err.details).to.deep.equal({ limit: 'nodesPerFlow', max: MAX_NODES_PER_FLOW, actual: MAX_NODES_PER_FLOW + 1 });
    const edges = Array.from({ length: MAX_EDGES_PER_FLOW + 1 }, (_, i) => ({ id: `e${i}`, source: 'a', target: 'b' }));
    expect(spec.given([created]).when({ type: 'ReplaceFlow', name: 'F', nodes: [node('a'), node('b')], edges, at }).thenThrows('LIMIT_EXCEEDED').details).to.include({ limit: 'edgesPerFlow' });
    // Exactly at the limit is fine.
    const atLimit = Array.from({ length: MAX_NODES_PER_FLOW }, (_, i) => node(`n${i}`));
    expect(spec.given([created]).when({ type: 'ReplaceFlow', name: 'F', nodes: atLimit, edges: [], at }).events()).to.have.length(1);
  });

  it('refuses a definition too big for one event, and a flow over its total size (413)', () => {
    const fat = (id: string) => node(id, { blob: 'x'.repeat(MAX_NODE_DATA_BYTES - 100) });
    const replace = (count: number): FlowCommand => ({ type: 'ReplaceFlow', name: 'F', nodes: Array.from({ length: count }, (_, i) => fat(`n${i}`)), edges: [], at });
    expect(spec.given([created]).when(replace(2)).events()).to.have.length(1);
    const err = spec.given([created]).when(replace(4)).thenThrows('LIMIT_EXCEEDED', 'too_large');
    expect(err.details).to.include({ limit: 'writeBytes', max: MAX_WRITE_BYTES });
    // Node by node a flow may grow past one event's size, up to its own limit.
    const events = [created, ...Array.from({ length: 20 }, (_, i): FlowEvent => ({ type: 'NodeAdded', data: { node: fat(`n${i}`), duplicatedFrom: null, at } }))];
    expect(spec.given(events).when({ type: 'AddNode', nodeId: 'small', node: node('small'), at }).events()).to.have.length(1);
    const tooMuch = spec.given(events).when({ type: 'AddNode', nodeId: 'last', node: fat('x'), at }).thenThrows('LIMIT_EXCEEDED', 'too_large');
    expect((tooMuch.details as { limit: string }).limit).to.equal('flowDefinitionBytes');
    spec.given(events).when({ type: 'DuplicateNode', nodeId: 'n0', newNodeId: 'copy', at }).thenThrows('LIMIT_EXCEEDED', 'too_large');
    const withSmall = [...events, { type: 'NodeAdded', data: { node: node('small'), duplicatedFrom: null, at } } as FlowEvent];
    const grow = spec.given(withSmall).when({ type: 'UpdateNode', nodeId: 'small', patch: { data: { more: 'y'.repeat(5000) } }, at }).thenThrows('LIMIT_EXCEEDED', 'too_large');
    expect((grow.details as { limit: string }).limit).to.equal('flowDefinitionBytes');
  });

  it('refuses a batch of connections too big for one write (413)', () => {
    const events = [created, ...['a', 'b'].map((id): FlowEvent => ({ type: 'NodeAdded', data: { node: node(id), duplicatedFrom: null, at } }))];
    const batch = (count: number): FlowCommand => ({
      type: 'AddConnections',
      connections: Array.from({ length: count }, (_, i) => ({ connectionId: `e${i}`, connection: { source: 'a', target: 'b', sourceHandle: `h${i}`, data: { note: 'x'.repeat(15_000) } } })),
      at,
    });
    expect(spec.given(events).when(batch(40)).events()).to.have.length(40);
    const err = spec.given(events).when(batch(60)).thenThrows('LIMIT_EXCEEDED', 'too_large');
    expect((err.details as { limit: string }).limit).to.equal('writeBytes');
  });

  it('refuses oversized node data, too-deep variables and long prompts as field problems', () => {
    const add = (data: Record<string, unknown>): FlowCommand => ({ type: 'AddNode', nodeId: 'n', node: { type: 'custom', position: { x: 0, y: 0 }, data }, at });
    for (const [data, field] of [
      [{ blob: 'x'.repeat(MAX_NODE_DATA_BYTES) }, 'body.data'],
      [{ variables: { a: { b: { c: { d: { e: { f: 1 } } } } } } }, 'body.data.variables'],
      [{ prompt: 'x'.repeat(MAX_PROMPT_LENGTH + 1) }, 'body.data.prompt'],
    ] as const) {
      const err = spec.given([created]).when(add(data)).thenThrows('VALIDATION_FAILED');
      expect((err.details as { fields: Array<{ field: string }> }).fields.map((f) => f.field)).to.deep.equal([field]);
    }
  });
});
