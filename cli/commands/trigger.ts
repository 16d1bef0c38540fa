import type { Command } from 'commander';
import { apiBaseUrl } from '../../client/index.js';
import { contextOf } from '../lib/context.js';

/**
 * `flowctl trigger …`: a flow's public trigger (`POST /api/public/flows/{id}/trigger` with the
 * `X-Trigger-Key` header). The service shows a key once, in the answer that made it, so
 * `regenerate-key` is the only command that prints one; `show` tells only whether one exists.
 */

type Trigger = { enabled: boolean; allowedMethods: string[]; inputSchema: unknown; hasKey: boolean; keyCreatedAt: string | null };

const triggerUrl = (url: string, flowId: string) => `${apiBaseUrl(url)}/public/flows/${encodeURIComponent(flowId)}/trigger`;

function describeTrigger(url: string, flowId: string, t: Trigger): string[] {
  return [
    `trigger of ${flowId}: ${t.enabled ? 'enabled' : 'disabled'}`,
    `url:     ${triggerUrl(url, flowId)}`,
    `methods: ${t.allowedMethods.join(', ')}`,
    `key:     ${t.hasKey ? `set ${t.keyCreatedAt ?? ''}`.trimEnd() : 'none (flowctl trigger regenerate-key makes one)'}`,
    ...(t.inputSchema ? [`inputs:  ${JSON.stringify(t.inputSchema)}`] : []),
  ];
}

export function registerTriggerCommands(program: Command) {
  const trigger = program.command('trigger').description("show, enable or disable a flow's public trigger, and make its key");

  trigger
    .command('show <flowId>')
    .description('whether the trigger is enabled, its URL and methods, and whether it has a key (never the key)')
    .action(async (flowId: string, _options: unknown, command: Command) => {
      const { url, api, out } = contextOf(command);
      const { flow } = await api.data(api.client.GET('/flows/{flowId}', { params: { path: { flowId } } }));
      const t = flow.trigger as Trigger;
      out.result({ flowId, url: triggerUrl(url, flowId), trigger: t }, () => describeTrigger(url, flowId, t));
    });

  for (const [name, enabled] of [['enable', true], ['disable', false]] as const) {
    trigger
      .command(`${name} <flowId>`)
      .description(enabled ? 'let the trigger start runs (it also needs a key: regenerate-key)' : 'refuse calls to the trigger (the key is kept)')
      .action(async (flowId: string, _options: unknown, command: Command) => {
        const { url, api, out } = contextOf(command);
        const reply = await api.data(api.client.PUT('/flows/{flowId}/trigger', { params: { path: { flowId } }, body: { enabled } }));
        const t = reply.trigger as Trigger;
        out.result({ flowId, url: triggerUrl(url, flowId), trigger: t }, () => describeTrigger(url, flowId, t));
      });
  }

  trigger
    .command('regenerate-key <flowId>')
    .description('make a new trigger key and print it: it is shown this once, and the previous key stops working at once')
    .action(async (flowId: string, _options: unknown, command: Command) => {
      const { url, api, out } = contextOf(command);
      const { key, keyCreatedAt } = await api.data(api.client.POST('/flows/{flowId}/trigger/regenerate-key', { params: { path: { flowId } } }));
      out.note('The key is shown only now: keep it somewhere safe. The previous key no longer works.');
      out.result({ flowId, url: triggerUrl(url, flowId), key, keyCreatedAt }, () => [
        key,
        `Call it with: curl -X POST ${triggerUrl(url, flowId)} -H 'X-Trigger-Key: ${key}' -H 'content-type: application/json' -d '{}'`,
      ]);
    });
}
