import { decider, type Decider } from '../shared/decider.js';
import { decideTerminal, decideTerminalBeat, type TerminalBeatCommand, type TerminalCommand } from './decide.js';
import { terminalBeatEventSchemas, terminalEventSchemas, type TerminalBeatEvent, type TerminalEvent } from './events.js';
import { evolveTerminal, evolveTerminalBeat, initialTerminalBeatState, initialTerminalState, type TerminalBeatState, type TerminalState } from './state.js';

export * from './events.js';
export * from './state.js';
export * from './decide.js';
export * from './thread.js';

/**
 * A remote terminal (`terminal-<id>`): a CLI session a user registered, the prompts the web sends
 * it (delivered at least once by long polls, acknowledged by steps or the answer), and the thread
 * of prompts, steps, answers and mirrored entries. Liveness is in `terminalbeat-<id>`.
 */
export const terminalDecider: Decider<TerminalCommand, TerminalState, TerminalEvent> = decider(initialTerminalState, evolveTerminal, decideTerminal, terminalEventSchemas);

export const terminalBeatDecider: Decider<TerminalBeatCommand, TerminalBeatState, TerminalBeatEvent> = decider(
  initialTerminalBeatState,
  evolveTerminalBeat,
  decideTerminalBeat,
  terminalBeatEventSchemas,
);
export * from './slots.js';
