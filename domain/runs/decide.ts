import type { RunCommand } from './commands.js';
import { claimRun, completeRun, confirmStop, failRun, requestRun, requestStop, resumeRun } from './decide-lifecycle.js';
import { sweepUnclaimedRun, timeOutRun } from './decide-deadlines.js';
import { completeNode, failNode, skipNodes, startNode } from './decide-nodes.js';
import type { RunEvent } from './events.js';
import type { RunState } from './state.js';

export const runStreamId = (processId: string) => `run-${processId}`;

export function decideRun(command: RunCommand, state: RunState): RunEvent[] {
  switch (command.type) {
    case 'RequestRun':
      return requestRun(command, state);
    case 'ClaimRun':
      return claimRun(command, state);
    case 'StartNode':
      return startNode(command, state);
    case 'CompleteNode':
      return completeNode(command, state);
    case 'FailNode':
      return failNode(command, state);
    case 'SkipNodes':
      return skipNodes(command, state);
    case 'CompleteRun':
      return completeRun(command, state);
    case 'FailRun':
      return failRun(command, state);
    case 'RequestStop':
      return requestStop(command, state);
    case 'ConfirmStop':
      return confirmStop(command, state);
    case 'ResumeRun':
      return resumeRun(command, state);
    case 'TimeOutRun':
      return timeOutRun(command, state);
    case 'SweepUnclaimedRun':
      return sweepUnclaimedRun(command, state);
  }
}
