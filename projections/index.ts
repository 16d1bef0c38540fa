import { cliProjectors } from './cli.js';
import { flowProjectors } from './flows.js';
import { orgProjectors } from './orgs.js';
import type { Projector } from './projector.js';
import { probesProjector } from './probes.js';
import { runsProjector } from './runs.js';
import { userProjectors } from './users.js';
import { workersProjector } from './workers.js';

export const allProjectors: Projector[] = [probesProjector, ...userProjectors, ...orgProjectors, ...cliProjectors, ...flowProjectors, runsProjector, workersProjector];
