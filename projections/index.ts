import { cliProjectors } from './cli.js';
import { flowProjectors } from './flows.js';
import { orgProjectors } from './orgs.js';
import type { Projector } from './projector.js';
import { probesProjector } from './probes.js';
import { runsProjector } from './runs.js';
import { workflowsProjector } from './workflows.js';
import { userProjectors } from './users.js';
import { workersProjector } from './workers.js';
import { mcpProjectors } from './mcp.js';
import { messagingProjectors } from './messaging.js';
import { documentsProjectors } from './documents.js';
import { memoryProjectors } from './memory.js';
import { webhooksProjectors } from './messaging-webhooks.js';
import { deadLettersProjector } from './operations-dead-letters.js';
import { systemTimersProjector } from './system.js';
import { terminalProjectors } from './terminals.js';

export const allProjectors: Projector[] = [probesProjector, ...userProjectors, ...orgProjectors, ...cliProjectors, ...flowProjectors, runsProjector, workflowsProjector, workersProjector, ...mcpProjectors, ...messagingProjectors, ...documentsProjectors, ...memoryProjectors, ...webhooksProjectors, deadLettersProjector, systemTimersProjector, ...terminalProjectors];
