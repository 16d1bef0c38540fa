import { Command, CommanderError } from 'commander';
import { registerAuthCommands } from './commands/auth.js';
import { registerCompletionCommand } from './commands/completion.js';
import { registerConnectionCommands } from './commands/connections.js';
import { registerEvalCommands } from './commands/evals.js';
import { registerFlowCommands } from './commands/flows.js';
import { registerFlowWriteCommands } from './commands/flows-write.js';
import { registerKeyCommands } from './commands/keys.js';
import { registerNodeCommands } from './commands/nodes.js';
import { registerRemoteCommands } from './commands/remote.js';
import { registerRunCommands } from './commands/run.js';
import { registerRunHistoryCommands } from './commands/runs-history.js';
import { registerTriggerCommands } from './commands/trigger.js';
import { registerWorkflowCommands } from './commands/workflows.js';
import { EXIT } from './lib/errors.js';
import { reportError } from './lib/output.js';
import { VERSION } from './lib/version.js';

/**
 * flowctl: the command-line client of the flow service. A pure HTTP client: it imports only its
 * own files and npm packages, so it can be published on its own.
 */
const EXIT_CODES_HELP = `
Configuration:
  --url <url> or FLOWCTL_URL    the service (http://host:3000 or http://host:3000/api); default: the last one used, else http://127.0.0.1:3000
  FLOWCTL_TOKEN                 use this token instead of the saved one (CI)
  XDG_CONFIG_HOME               the token is saved in $XDG_CONFIG_HOME/flowctl/credentials.json (default ~/.config), mode 0600

Exit codes:
  0    done
  1    the service refused the request or failed (other 4xx, 5xx), or an unexpected error
  2    bad usage: unknown command or option, bad --input, unreadable or invalid file, 400 from the service
  3    not signed in, token refused (401), or device login denied or expired
  4    not found (404: missing, or another user's)
  5    the run ended failed, stopped or timed out; the workflow ended FAILED, CANCELED, TERMINATED or TIMED_OUT
  6    the service could not be reached
  130  interrupted
`;

export function buildProgram(): Command {
  const program = new Command('flowctl')
    .description('command-line client of the flow automation service')
    .version(VERSION, '-V, --version')
    .option('--url <url>', 'service URL (or FLOWCTL_URL)')
    .option('--json', 'machine-readable output: one JSON document, or JSON lines for streams')
    .showHelpAfterError('(run flowctl --help for usage)')
    .addHelpText('after', EXIT_CODES_HELP)
    .exitOverride();
  registerAuthCommands(program);
  registerFlowWriteCommands(registerFlowCommands(program));
  registerNodeCommands(program);
  registerConnectionCommands(program);
  registerTriggerCommands(program);
  registerRunHistoryCommands(registerRunCommands(program));
  registerKeyCommands(program);
  registerWorkflowCommands(program);
  registerEvalCommands(program);
  registerRemoteCommands(program);
  // Last: it describes the tree the others made.
  registerCompletionCommand(program);
  for (const command of program.commands) {
    command.exitOverride();
    for (const sub of command.commands) sub.exitOverride();
  }
  return program;
}

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  const json = argv.includes('--json');
  try {
    await program.parseAsync(argv, { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.OK;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version end with exit code 0; usage mistakes with 2 (commander already printed them).
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return EXIT.OK;
      if (err.exitCode === 0) return EXIT.OK;
      return EXIT.USAGE;
    }
    return reportError(err, json);
  }
}

const code = await main(process.argv.slice(2));
process.exitCode = code;
