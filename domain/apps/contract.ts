import type { AppContract } from './events.js';

/** What the contract check needs of a flow node: its id and data (`nodeType`, `inputSchema`, `outputKey`). */
export interface ContractFlowNode {
  id: string;
  data: Record<string, unknown>;
}

export interface ContractMismatch {
  side: 'input' | 'output';
  /** A JSON Pointer into the contract's schema (`/properties/email`), or '' for the whole side. */
  path: string;
  code: 'NO_INPUT_NODE' | 'NO_OUTPUT_NODE' | 'INPUT_NOT_DECLARED_BY_FLOW' | 'INPUT_REQUIRED_BY_FLOW' | 'INPUT_TYPE_DIFFERS' | 'OUTPUT_NOT_PRODUCED';
  message: string;
}

type Schema = Record<string, unknown>;
const isObject = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);
const propertiesOf = (schema: unknown): Record<string, unknown> => (isObject(schema) && isObject(schema.properties) ? schema.properties : {});
const requiredOf = (schema: unknown): string[] => (isObject(schema) && Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : []);
const typesOf = (schema: unknown): string[] | null => {
  if (!isObject(schema) || schema.type === undefined) return null;
  return ([] as unknown[]).concat(schema.type).filter((t): t is string => typeof t === 'string').sort();
};
const pointer = (name: string) => `/properties/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`;
const outputKeyOf = (node: ContractFlowNode) => (typeof node.data.outputKey === 'string' && node.data.outputKey !== '' ? node.data.outputKey : node.id);

/**
 * Where a flow does not match an app's contract, from the flow's nodes:
 * - input: the flow needs an `input` node; each field the contract sends must be declared by the
 *   input node's `inputSchema` when it has one (with the same `type` when both say), and each field
 *   that schema requires must be required by the contract too;
 * - output: the run's result is keyed by the output nodes' `outputKey` (README, Execution
 *   semantics), so each property of the contract's output needs an `output` node with that key.
 * An empty list means the flow matches.
 */
export function contractMismatches(contract: AppContract, nodes: ContractFlowNode[]): ContractMismatch[] {
  const out: ContractMismatch[] = [];
  const inputNodes = nodes.filter((n) => n.data.nodeType === 'input');
  const outputNodes = nodes.filter((n) => n.data.nodeType === 'output');
  const contractInputs = propertiesOf(contract.input);
  if (inputNodes.length === 0) {
    if (Object.keys(contractInputs).length > 0) out.push({ side: 'input', path: '', code: 'NO_INPUT_NODE', message: 'the flow has no input node to receive the app\'s inputs' });
  } else {
    const declared: Record<string, unknown> = {};
    const required = new Set<string>();
    let open = false;
    for (const node of inputNodes) {
      if (!isObject(node.data.inputSchema)) { open = true; continue; }
      Object.assign(declared, propertiesOf(node.data.inputSchema));
      for (const r of requiredOf(node.data.inputSchema)) required.add(r);
    }
    const contractRequired = new Set(requiredOf(contract.input));
    for (const [name, schema] of Object.entries(contractInputs)) {
      if (!(name in declared)) {
        if (!open) out.push({ side: 'input', path: pointer(name), code: 'INPUT_NOT_DECLARED_BY_FLOW', message: `the app sends "${name}" but the flow's input schema does not declare it` });
        continue;
      }
      const a = typesOf(schema);
      const b = typesOf(declared[name]);
      if (a && b && a.join('|') !== b.join('|')) out.push({ side: 'input', path: pointer(name), code: 'INPUT_TYPE_DIFFERS', message: `"${name}" is ${a.join('|')} in the contract but ${b.join('|')} in the flow` });
    }
    for (const name of required) {
      if (!contractRequired.has(name)) out.push({ side: 'input', path: pointer(name), code: 'INPUT_REQUIRED_BY_FLOW', message: `the flow requires "${name}" but the contract does not make the app send it` });
    }
  }
  const contractOutputs = Object.keys(propertiesOf(contract.output));
  if (outputNodes.length === 0) {
    if (contractOutputs.length > 0) out.push({ side: 'output', path: '', code: 'NO_OUTPUT_NODE', message: 'the flow has no output node: its result is keyed by node ids, not by the contract\'s output fields' });
  } else {
    const keys = new Set(outputNodes.map(outputKeyOf));
    for (const name of contractOutputs) {
      if (!keys.has(name)) out.push({ side: 'output', path: pointer(name), code: 'OUTPUT_NOT_PRODUCED', message: `the contract expects "${name}" but no output node has outputKey "${name}"` });
    }
  }
  return out;
}

/**
 * The nodes and edges of a flow made to match a contract (POST /apps/{id}/flow/create): one input
 * node checking the contract's input schema, and one output node per property of the output schema
 * (outputKey = the property; `result` when the output declares none), each fed by the input node.
 */
export function flowGraphForContract(contract: AppContract, ids: { input: string; output: (key: string) => string }) {
  const outputKeys = Object.keys(propertiesOf(contract.output));
  const keys = outputKeys.length > 0 ? outputKeys : ['result'];
  const nodes = [
    { id: ids.input, type: 'custom', position: { x: 0, y: 0 }, data: { nodeType: 'input' as const, agentName: 'App input', inputSchema: contract.input } },
    ...keys.map((key, i) => ({
      id: ids.output(key), type: 'custom', position: { x: 320, y: i * 140 },
      data: { nodeType: 'output' as const, agentName: `Output ${key}`, outputKey: key },
    })),
  ];
  const edges = keys.map((key) => ({ id: `e-${ids.input}-${ids.output(key)}`, source: ids.input, target: ids.output(key) }));
  return { nodes, edges };
}
