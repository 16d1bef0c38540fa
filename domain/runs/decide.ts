import { decideByType } from '../shared/decider.js';
import type { RunCommand } from './commands.js';
import { claimRun, completeRun, confirmStop, failRun, requestRun, requestStop, resumeRun } from './decide-lifecycle.js';
import { sweepUnclaimedRun, timeOutRun } from './decide-deadlines.js';
import { pruneRunHistory } from './decide-retention.js';
import { completeNode, failNode, skipNodes, startNode } from './decide-nodes.js';
import type { RunEvent } from './events.js';
import type { RunState } from './state.js';

export const runStreamId = (processId: string) => `run-${processId}`;

/** Each command to its part: decide-lifecycle, decide-nodes, decide-deadlines. */
export const decideRun = decideByType<RunCommand, RunState, RunEvent>({
  RequestRun: requestRun, ClaimRun: claimRun, CompleteRun: completeRun, FailRun: failRun, RequestStop: requestStop, ConfirmStop: confirmStop, ResumeRun: resumeRun,
  StartNode: startNode, CompleteNode: completeNode, FailNode: failNode, SkipNodes: skipNodes,
  TimeOutRun: timeOutRun, SweepUnclaimedRun: sweepUnclaimedRun,
  PruneRunHistory: pruneRunHistory,
});
