import { hostname } from 'node:os';
import type { Command } from 'commander';
import { contextOf } from '../lib/context.js';
import { EXIT, usageError } from '../lib/errors.js';
import { RemoteSession } from '../lib/remote.js';

export function registerRemoteCommands(program: Command) {
  const remote = program.command('remote').description('hand this terminal to the web');
  remote
    .command('connect')
    .description('register this terminal and answer the prompts sent from the web with a local agent command (prompt on stdin, output streamed back)')
    .requiredOption('--agent <command>', 'the command that answers a prompt (run by the shell; exit 0 = completed, else failed)')
    .option('--name <name>', 'how the terminal shows up on the web', hostname())
    .option('--wait <seconds>', 'how long one poll waits on the service for a prompt', (v) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 1 || n > 60) throw usageError(`--wait must be 1-60 seconds, not ${v}`);
      return n;
    }, 30)
    .option('--local', 'also read prompts typed here (one per line), answer them and mirror both into the thread (default when stdin is a terminal)')
    .option('--no-local', 'do not read prompts from stdin')
    .option('--agent-format <format>', 'text: the agent prints its answer; stream-json: JSON lines as `claude -p --output-format stream-json --verbose` writes them (thinking and tool steps, its session id, resumed on the next prompt through $FLOWCTL_RESUME_ARGS)', (v) => {
      if (v !== 'text' && v !== 'stream-json') throw usageError(`--agent-format must be text or stream-json, not ${v}`);
      return v;
    }, 'text')
    .option('--use-proxy', "point the agent at this service's CLI LLM proxy (ANTHROPIC_BASE_URL, and this CLI token as ANTHROPIC_API_KEY)")
    .action(async (options: { agent: string; name: string; wait: number; local?: boolean; agentFormat: 'text' | 'stream-json'; useProxy?: boolean }, command: Command) => {
      const { api, out } = contextOf(command);
      api.requireToken();
      const session = new RemoteSession(api, out, { name: options.name, agent: options.agent, wait: options.wait, local: options.local ?? Boolean(process.stdin.isTTY), agentFormat: options.agentFormat, useProxy: options.useProxy ?? false });
      let signal: NodeJS.Signals | null = null;
      const onSignal = (s: NodeJS.Signals) => {
        if (signal) process.exit(EXIT.INTERRUPTED); // a second Ctrl-C does not wait
        signal = s;
        void session.stop().then(() => process.exit(s === 'SIGINT' ? EXIT.INTERRUPTED : EXIT.OK));
      };
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
      await session.run();
    });
}
