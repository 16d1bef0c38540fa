import type { Command } from 'commander';
import { ApiClient } from './api.js';
import { resolveUrl, tokenFor } from './config.js';
import { Output, type GlobalOptions } from './output.js';

export interface CommandContext {
  url: string;
  api: ApiClient;
  out: Output;
  json: boolean;
}

/** The service URL, the API client with the saved token, and the output mode for a command. */
export function contextOf(command: Command): CommandContext {
  const globals = command.optsWithGlobals<GlobalOptions>();
  const url = resolveUrl(globals.url);
  const json = Boolean(globals.json);
  return { url, api: new ApiClient(url, tokenFor(url)), out: new Output(json), json };
}
