/**
 * The flows area of the web console (issue 35), as a person uses it in Chromium at 1280×800 on the
 * embedded default: create a flow from the list, build input → transform → output by dragging from
 * the palette and connecting handles, save, run it and watch the nodes turn green, delete a node and
 * travel back to the version that had it, undo, resolve a conflict with a change made behind the
 * page's back (both ways), and regenerate the trigger key. Screenshots: artifacts/console/2x-*.png.
 */
import { expect } from 'chai';
import type { Browser, Locator, Page } from 'playwright-core';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { buildConsoleOnce, keepScreenshot, launchChromium, openConsole } from '../support/console-browser.js';
import { startTestService, type TestService } from '../support/test-service.js';

/** Drags a palette item onto the canvas at (x, y) of the pane (HTML5 drag and drop). */
async function dropFromPalette(page: Page, label: string, x: number, y: number) {
  const item = page.getByRole('navigation', { name: 'Node types' }).getByRole('button', { name: label, exact: true });
  await item.dragTo(page.locator('.react-flow__pane'), { targetPosition: { x, y } });
}

/** Drags with the mouse from one handle to another, as a person connects two nodes. */
async function dragHandle(page: Page, from: Locator, to: Locator) {
  const a = (await from.boundingBox())!;
  const b = (await to.boundingBox())!;
  await page.mouse.move(a.x + a.width / 2, a.y + a.height / 2);
  await page.mouse.down();
  await page.mouse.move(a.x + a.width / 2, a.y + 30, { steps: 5 });
  await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2, { steps: 10 });
  await page.mouse.up();
}

const node = (page: Page, nodeType: string) => page.locator(`.react-flow__node .flow-node[data-node-type="${nodeType}"]`);

describe('web console: flows (list, canvas, run live, time travel, conflicts, trigger)', function () {
  this.timeout(180_000);
  let svc: TestService;
  let browser: Browser;
  let origin: string;
  let user: RegisteredUser;
  let auth: Record<string, string>;
  before(async () => {
    await buildConsoleOnce();
    svc = await startTestService('embedded');
    origin = new URL(svc.baseUrl).origin;
    browser = await launchChromium();
    user = await registerUser(svc.baseUrl);
    auth = { authorization: `Bearer ${user.token}` };
  });
  after(async () => {
    await browser?.close();
    await svc?.stop();
  });

  it('builds a three-node flow by drag and drop, runs it green, travels back in time, undoes, merges a conflict and regenerates the key', async () => {
    const { page, elsewhere, problems } = await openConsole(browser, origin, { token: user.token });
    await page.goto(`${origin}/flows`);
    await page.getByRole('heading', { level: 1, name: 'Flows' }).waitFor();
    await page.getByLabel('New flow name').fill('Greeting flow');
    await page.getByRole('button', { name: 'Create flow' }).click();
    const link = page.getByRole('table').getByRole('link', { name: 'Greeting flow' });
    await link.waitFor();
    await keepScreenshot(page, '20-flows-list');
    await link.click();
    await page.getByRole('heading', { level: 1, name: 'Greeting flow' }).waitFor();
    const flowId = new URL(page.url()).pathname.split('/').pop()!;
    await page.getByRole('navigation', { name: 'Node types' }).getByRole('button', { name: 'Transform', exact: true }).waitFor();
    await keepScreenshot(page, '21-canvas-empty');

    // Three nodes, dragged from the palette onto the pane.
    await dropFromPalette(page, 'Input', 260, 60);
    await node(page, 'input').waitFor();
    await dropFromPalette(page, 'Transform', 260, 200);
    await node(page, 'transform').waitFor();
    // The dropped node is selected: its settings come from the type's schema.
    const template = page.getByLabel('template (required)');
    expect(await template.inputValue(), 'a required template starts filled').to.equal('{{previous}}');
    await template.fill('Hello {{inputs.name}}');
    await dropFromPalette(page, 'Output', 260, 340);
    await node(page, 'output').waitFor();
    expect(await page.locator('.react-flow__node').count()).to.equal(3);
    await keepScreenshot(page, '22-three-nodes');

    // Connect input → transform → output by dragging handle to handle.
    const handle = (nodeType: string, kind: 'source' | 'target') => page.locator(`.react-flow__node:has(.flow-node[data-node-type="${nodeType}"]) .react-flow__handle.${kind}`);
    await dragHandle(page, handle('input', 'source'), handle('transform', 'target'));
    await page.waitForFunction(() => document.querySelectorAll('.react-flow__edge').length === 1);
    await dragHandle(page, handle('transform', 'source'), handle('output', 'target'));
    await page.waitForFunction(() => document.querySelectorAll('.react-flow__edge').length === 2);
    await keepScreenshot(page, '23-connected');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText('Saved · version 1').waitFor();
    const saved = await call(svc.baseUrl, 'GET', `/flows/${flowId}`, undefined, auth);
    expect(saved.body.flow.nodes).to.have.length(3);
    expect(saved.body.flow.edges).to.have.length(2);
    const idOf = (t: string) => saved.body.flow.nodes.find((n: { data: { nodeType: string } }) => n.data.nodeType === t).id as string;
    expect(saved.body.flow.edges.map((e: { source: string; target: string }) => [e.source, e.target])).to.have.deep.members([
      [idOf('input'), idOf('transform')],
      [idOf('transform'), idOf('output')],
    ]);
    expect(saved.body.flow.nodes.find((n: { id: string }) => n.id === idOf('transform')).data.template).to.equal('Hello {{inputs.name}}');

    // Run from the canvas: every node turns green as the live stream reports it complete.
    await page.getByLabel('Inputs (JSON)').fill('{"name": "Ada"}');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await page.waitForFunction(() => document.querySelectorAll('.flow-node[data-status="completed"]').length === 3, undefined, { timeout: 20_000 });
    const colours = await page.locator('.flow-node').evaluateAll((els) => els.map((el) => getComputedStyle(el).borderTopColor));
    expect(colours).to.deep.equal(['rgb(23, 112, 61)', 'rgb(23, 112, 61)', 'rgb(23, 112, 61)']);
    const runLink = page.getByRole('link', { name: 'open the run' });
    expect(await runLink.getAttribute('href')).to.match(/^\/runs\/[A-Za-z0-9-]+$/);
    await node(page, 'output').click();
    expect(await page.getByTestId('node-output').textContent()).to.equal('Hello Ada');
    await keepScreenshot(page, '24-run-green');

    // Delete the output node with the Delete key, save: version 2 has two nodes.
    await node(page, 'output').click();
    await page.keyboard.press('Delete');
    await page.waitForFunction(() => document.querySelectorAll('.react-flow__node').length === 2);
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText('Saved · version 2').waitFor();
    expect((await call(svc.baseUrl, 'GET', `/flows/${flowId}`, undefined, auth)).body.flow.nodes).to.have.length(2);

    // Time travel: one step back by keyboard shows the removed node again, read only, with its event.
    const slider = page.getByLabel('Version', { exact: true });
    await slider.focus();
    await page.keyboard.press('ArrowLeft');
    await page.getByText('Version 1 of 2 (read only)').waitFor();
    await node(page, 'output').waitFor();
    expect(await page.locator('.react-flow__node').count()).to.equal(3);
    expect(await page.locator('.flows-canvas').getAttribute('data-readonly')).to.equal('true');
    const event = page.getByTestId('version-event');
    await event.getByText('FlowReplaced').waitFor();
    expect(await event.textContent()).to.contain('by you');
    expect(await event.locator('[title]').getAttribute('title')).to.equal(user.user.id);
    await keepScreenshot(page, '25-time-travel');
    await page.getByRole('button', { name: 'Back to now' }).click();
    await page.getByText('Version 2 (now)').waitFor();
    expect(await page.locator('.react-flow__node').count()).to.equal(2);

    // Undo restores the version before the last one, as a new version.
    await page.getByRole('button', { name: 'Undo' }).click();
    await page.getByText('Saved · version 3').waitFor();
    await page.getByTestId('version-event').getByText('(restored from version 1)').waitFor();
    expect(await page.locator('.react-flow__node').count()).to.equal(3);
    expect((await call(svc.baseUrl, 'GET', `/flows/${flowId}`, undefined, auth)).body.flow.nodes).to.have.length(3);

    // A change behind the page's back, then a save here: the merge prompt; overwrite with mine.
    expect((await call(svc.baseUrl, 'PATCH', `/flows/${flowId}/name`, { name: 'Renamed elsewhere' }, auth)).status).to.equal(200);
    const palette = page.getByRole('navigation', { name: 'Node types' });
    await palette.getByRole('button', { name: 'Delay', exact: true }).focus();
    await page.keyboard.press('Enter');
    await node(page, 'delay').waitFor();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    const prompt = page.getByRole('alertdialog', { name: 'The flow changed since you opened it' });
    await prompt.waitFor();
    await keepScreenshot(page, '26-conflict');
    await prompt.getByRole('button', { name: 'Overwrite with mine' }).click();
    await page.getByText('Saved · version 5').waitFor();
    expect(await prompt.count()).to.equal(0);
    const mine = (await call(svc.baseUrl, 'GET', `/flows/${flowId}`, undefined, auth)).body.flow;
    expect(mine.nodes.map((n: { data: { nodeType: string } }) => n.data.nodeType).sort()).to.deep.equal(['delay', 'input', 'output', 'transform']);
    expect(mine.name, 'their rename is kept').to.equal('Renamed elsewhere');

    // Again, but keep theirs: the canvas shows their graph and drops the change made here.
    const theirs = { name: mine.name, nodes: mine.nodes.filter((n: { data: { nodeType: string } }) => n.data.nodeType === 'input'), edges: [] };
    expect((await call(svc.baseUrl, 'PUT', `/flows/${flowId}`, theirs, auth)).status).to.equal(200);
    await palette.getByRole('button', { name: 'Output', exact: true }).focus();
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.querySelectorAll('.react-flow__node').length === 5);
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await prompt.waitFor();
    await prompt.getByRole('button', { name: 'Reload theirs' }).click();
    await page.getByText('Saved · version 6').waitFor();
    expect(await page.locator('.react-flow__node').count()).to.equal(1);

    // The trigger key: made, then regenerated; each shown once, each different.
    await page.getByRole('button', { name: 'Make a key' }).click();
    const key = page.getByTestId('trigger-key');
    await key.waitFor();
    const first = (await key.textContent())!;
    await page.getByRole('button', { name: 'Regenerate key' }).click();
    await page.waitForFunction((old) => document.querySelector('[data-testid="trigger-key"]')?.textContent !== old, first);
    const second = (await key.textContent())!;
    expect(second).to.have.length.greaterThan(16).and.not.equal(first);
    await keepScreenshot(page, '27-trigger-key');
    // The key writes moved the version on; the page followed them, so its next save is no conflict.
    await page.getByText('Saved · version 8').waitFor();
    // Undo skips the key writes: it restores the version before the last edit (their PUT, version 6).
    await page.getByRole('button', { name: 'Undo' }).click();
    await page.getByText('Saved · version 9').waitFor();
    await page.getByTestId('version-event').getByText('(restored from version 5)').waitFor();
    expect(await page.locator('.react-flow__node').count()).to.equal(4);
    // Trigger settings: on, for GET and POST.
    await page.getByLabel(/^Trigger enabled/).check();
    await page.getByRole('group', { name: 'Allowed methods' }).getByLabel('GET').check();
    await page.getByRole('button', { name: 'Save trigger settings' }).click();
    await page.getByText('Trigger settings saved.').waitFor();
    const trigger = (await call(svc.baseUrl, 'GET', `/flows/${flowId}`, undefined, auth)).body.flow.trigger;
    expect(trigger).to.include({ enabled: true, hasKey: true });
    expect(trigger.allowedMethods).to.have.members(['GET', 'POST']);
    await page.getByText('Saved · version 10').waitFor();

    expect(elsewhere, 'requests leaving the service').to.deep.equal([]);
    expect(problems).to.deep.equal([]);
  });

  it('lists flows a page at a time, renames one in place and deletes one after a confirmation', async () => {
    const other = await registerUser(svc.baseUrl);
    const otherAuth = { authorization: `Bearer ${other.token}` };
    for (let i = 1; i <= 21; i++) expect((await call(svc.baseUrl, 'POST', '/flows', { name: `Flow ${String(i).padStart(2, '0')}` }, otherAuth)).status).to.equal(201);
    const { page, elsewhere, problems } = await openConsole(browser, origin, { token: other.token });
    await page.goto(`${origin}/flows`);
    const rows = page.getByRole('table').locator('tbody tr');
    await rows.first().waitFor();
    expect(await rows.count(), 'the first page').to.equal(20);
    await page.getByRole('button', { name: 'Load more flows' }).click();
    await page.waitForFunction(() => document.querySelectorAll('table tbody tr').length === 21);
    expect(await page.getByRole('button', { name: 'Load more flows' }).count()).to.equal(0);

    await page.getByRole('button', { name: 'Rename Flow 21' }).click();
    await page.getByLabel('New name for Flow 21').fill('Weekly digest');
    await page.getByRole('button', { name: 'Save name' }).click();
    await page.getByRole('link', { name: 'Weekly digest' }).waitFor();

    await page.getByRole('button', { name: 'Delete Flow 20' }).click();
    const confirm = page.getByRole('group', { name: 'Confirm deleting Flow 20' });
    await keepScreenshot(page, '28-flows-delete-confirm');
    await confirm.getByRole('button', { name: 'Keep it' }).click();
    expect(await page.getByRole('link', { name: 'Flow 20' }).count(), 'kept').to.equal(1);
    await page.getByRole('button', { name: 'Delete Flow 20' }).click();
    await confirm.getByRole('button', { name: 'Yes, delete' }).click();
    await page.waitForFunction(() => document.querySelectorAll('table tbody tr').length === 20);

    const listed = (await call(svc.baseUrl, 'GET', '/flows?limit=100', undefined, otherAuth)).body.items.map((f: { name: string }) => f.name);
    expect(listed).to.have.length(20).and.include('Weekly digest').and.not.include('Flow 20').and.not.include('Flow 21');
    expect(elsewhere).to.deep.equal([]);
    expect(problems).to.deep.equal([]);
  });

  it('turns a failing node red with its error, and fits a phone-width screen', async () => {
    const created = await call(svc.baseUrl, 'POST', '/flows', { name: 'Fails on purpose' }, auth);
    const flowId = created.body.flow.id as string;
    const nodes = [
      { id: 'start', type: 'custom', position: { x: 0, y: 0 }, data: { nodeType: 'input', agentName: 'Start' } },
      // A workflow-only kind: a plain run fails it with WORKFLOW_ONLY_NODE, with no outside service involved.
      { id: 'state', type: 'custom', position: { x: 0, y: 140 }, data: { nodeType: 'set_state', agentName: 'Set state', values: { a: 1 } } },
    ];
    expect((await call(svc.baseUrl, 'PUT', `/flows/${flowId}`, { name: 'Fails on purpose', nodes, edges: [{ id: 'e1', source: 'start', target: 'state' }] }, auth)).status).to.equal(200);
    const { page, elsewhere, problems } = await openConsole(browser, origin, { token: user.token, viewport: { width: 375, height: 740 } });
    await page.goto(`${origin}/flows/${flowId}`);
    await page.getByRole('heading', { level: 1, name: 'Fails on purpose' }).waitFor();
    await page.locator('.react-flow__node').first().waitFor();
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    const failed = page.locator('.flow-node[data-status="failed"]');
    await failed.waitFor({ timeout: 20_000 });
    expect(await failed.getAttribute('data-node-type')).to.equal('set_state');
    expect(await failed.evaluate((el) => getComputedStyle(el).borderTopColor)).to.equal('rgb(192, 57, 43)');
    expect(await page.locator('.flow-node[data-node-type="input"]').getAttribute('data-status')).to.equal('completed');
    await page.locator('.flows-run-status .flows-run-failure').getByText('(NODE_FAILED)').waitFor();
    await failed.click();
    await page.getByRole('region', { name: 'This node in the last run' }).getByText('WORKFLOW_ONLY_NODE').waitFor();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow, 'horizontal overflow in px').to.be.at.most(0);
    await keepScreenshot(page, '29-phone-failed-node');
    expect(elsewhere).to.deep.equal([]);
    expect(problems).to.deep.equal([]);
  });

  it('builds, connects, saves and runs a flow with the keyboard alone', async () => {
    const created = await call(svc.baseUrl, 'POST', '/flows', { name: 'Keyboard flow' }, auth);
    const flowId = created.body.flow.id as string;
    const { page, elsewhere, problems } = await openConsole(browser, origin, { token: user.token });
    await page.goto(`${origin}/flows/${flowId}`);
    const palette = page.getByRole('navigation', { name: 'Node types' });
    await palette.getByRole('button', { name: 'Output', exact: true }).focus();
    await page.keyboard.press('Enter');
    await palette.getByRole('button', { name: 'Input', exact: true }).focus();
    await page.keyboard.press('Enter');
    // The node just added is selected: its panel connects it.
    const connections = page.getByRole('group', { name: 'Connections from Input 2' });
    await connections.getByLabel('Connect to').focus();
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await connections.getByRole('button', { name: 'Remove the connection to Output 1' }).waitFor();
    await page.getByRole('button', { name: 'Save', exact: true }).focus();
    await page.keyboard.press('Enter');
    await page.getByText('Saved · version 1').waitFor();
    const flow = (await call(svc.baseUrl, 'GET', `/flows/${flowId}`, undefined, auth)).body.flow;
    const idOf = (t: string) => flow.nodes.find((n: { data: { nodeType: string } }) => n.data.nodeType === t).id as string;
    expect(flow.edges.map((e: { source: string; target: string }) => [e.source, e.target])).to.deep.equal([[idOf('input'), idOf('output')]]);
    await page.getByRole('button', { name: 'Run', exact: true }).focus();
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.querySelectorAll('.flow-node[data-status="completed"]').length === 2, undefined, { timeout: 20_000 });
    await keepScreenshot(page, '29-keyboard-flow');

    // A node that cannot be saved yet: the refusal names it, and its settings open from there.
    await palette.getByRole('button', { name: 'LLM', exact: true }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    const refusal = page.getByRole('alert').filter({ hasText: 'Not saved' });
    await refusal.getByText('LLM 3 · model: must not be empty').waitFor();
    await keepScreenshot(page, '29-keyboard-save-refused');
    await node(page, 'input').click();
    await page.getByRole('group', { name: 'Settings of Input 2' }).waitFor();
    await refusal.getByRole('button', { name: 'Show the node' }).click();
    await page.getByRole('group', { name: 'Settings of LLM 3' }).getByLabel('model (required)').fill('gpt-4o-mini');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText('Saved · version 2').waitFor();
    expect(await refusal.count()).to.equal(0);

    // Back one version with the slider, then restore it: the LLM node goes, as a new version 3.
    await page.getByLabel('Version', { exact: true }).focus();
    await page.keyboard.press('ArrowLeft');
    await page.getByText('Version 1 of 2 (read only)').waitFor();
    await page.getByRole('button', { name: 'Restore this version' }).click();
    await page.getByText('Saved · version 3').waitFor();
    await page.getByText('Version 3 (now)').waitFor();
    expect(await page.locator('.react-flow__node').count()).to.equal(2);
    expect((await call(svc.baseUrl, 'GET', `/flows/${flowId}`, undefined, auth)).body.flow.nodes).to.have.length(2);
    expect(elsewhere).to.deep.equal([]);
    expect(problems).to.deep.equal([]);
  });
});
