/**
 * The web console's runs, workflows and agents pages (issue 35), as a person uses them in Chromium
 * at 1280×800 on the embedded service: a flow's runs filtered by status, a run's nodes (and one
 * followed live until it completes), a waiting workflow signalled from the page and seen to finish
 * in its history without a reload, pause/resume and cancel, and a chat with an agent (the fake
 * OpenAI server) whose answer streams in with its tool call. Nothing leaves the service, no CSP
 * violation, no page error.
 */
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { buildConsoleOnce, keepScreenshot, launchChromium, openConsole, type WatchedPage } from '../support/console-browser.js';
import { startFakeOpenAi, type FakeLlmServer } from '../support/fake-llm/index.js';
import { startTestService, waitUntil, type TestService } from '../support/test-service.js';

const node = (data: Record<string, unknown>, x: number) => ({ type: 'custom', position: { x, y: 0 }, data });

describe('web console: runs, workflows and agents', function () {
  this.timeout(180_000);
  let svc: TestService;
  let fake: FakeLlmServer;
  let browser: Browser;
  let origin: string;
  let alice: RegisteredUser;
  const opened: WatchedPage[] = [];

  const as = async (method: string, path: string, body?: unknown) => {
    const res = await call(svc.baseUrl, method, path, body, alice.auth);
    expect(res.status, `${method} ${path}: ${res.text}`).to.be.oneOf([200, 201, 202]);
    return res.body;
  };
  const newFlow = async (name: string, nodes: Array<Record<string, unknown>>) => {
    const flowId = (await as('POST', '/flows', { name })).flow.id as string;
    const ids: string[] = [];
    for (const [i, data] of nodes.entries()) ids.push((await as('POST', `/flows/${flowId}/nodes`, node(data, i * 220))).node.id);
    for (let i = 1; i < ids.length; i++) await as('POST', `/flows/${flowId}/connections`, { source: ids[i - 1], target: ids[i] });
    return { flowId, ids };
  };
  const workflowStatus = async (id: string) => (await as('GET', `/workflows/${id}`)).workflow.status as string;
  const open = async () => {
    const watched = await openConsole(browser, origin, { token: alice.token });
    opened.push(watched);
    return watched.page;
  };
  /** A mark the page keeps until it is loaded again: still there means the change came live. */
  const markPage = (page: Page) => page.evaluate(() => ((window as unknown as { consoleMark: string }).consoleMark = 'not reloaded'));
  const stillMarked = (page: Page) => page.evaluate(() => (window as unknown as { consoleMark?: string }).consoleMark);

  before(async () => {
    await buildConsoleOnce();
    fake = await startFakeOpenAi();
    svc = await startTestService('embedded', { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: `${fake.url}/v1`, LLM_MAX_RETRIES: '0' });
    origin = new URL(svc.baseUrl).origin;
    browser = await launchChromium();
    alice = await registerUser(svc.baseUrl);
  });
  after(async () => {
    await browser?.close();
    await svc?.stop();
    await fake?.close();
  });
  afterEach(() => {
    for (const { elsewhere, problems } of opened.splice(0)) {
      expect(elsewhere, 'requests leaving the service').to.deep.equal([]);
      expect(problems, 'CSP violations and page errors').to.deep.equal([]);
    }
  });

  it("lists a flow's runs filtered by status, and shows a run's nodes with their outputs", async () => {
    const { flowId, ids } = await newFlow('Greeter', [
      { nodeType: 'transform', template: 'hi {{inputs.q}}' },
      { nodeType: 'transform', template: '{{previous}}!' },
    ]);
    const runs: string[] = [];
    for (const q of ['there', 'again']) {
      const run = await as('POST', `/flows/${flowId}/run`, { inputs: { q } });
      expect(run.status).to.equal('completed');
      runs.push(run.processId);
    }
    // A node needing a provider the service has no key for, added after: the next run fails there.
    const llm = (await as('POST', `/flows/${flowId}/nodes`, node({ nodeType: 'llm', llm: 'anthropic', model: 'claude-sonnet-4-0', prompt: 'Say {{previous}}' }, 440))).node.id as string;
    await as('POST', `/flows/${flowId}/connections`, { source: ids[1], target: llm });
    const failed = await as('POST', `/flows/${flowId}/run`, { inputs: { q: 'fail' } });
    expect(failed.status, JSON.stringify(failed)).to.equal('failed');
    const page = await open();
    await page.goto(`${origin}/runs`);
    await page.getByRole('heading', { level: 1, name: 'Runs' }).waitFor();
    await page.getByRole('combobox', { name: /^Flow/ }).selectOption({ label: 'Greeter' });
    await page.getByLabel('Status').selectOption('completed');
    await page.waitForURL(/\/runs\?flow=.*&status=completed$/);
    const table = page.getByRole('table', { name: 'Runs of the flow' });
    for (const id of runs) await table.getByRole('link', { name: id }).waitFor();
    expect(await table.locator('tbody tr').count()).to.equal(2);
    expect(await table.locator('tbody tr[data-status="completed"]').count()).to.equal(2);
    expect(await table.getByRole('link', { name: failed.processId }).count(), 'the failed run is filtered out').to.equal(0);
    await keepScreenshot(page, '30-runs-list');
    await page.getByLabel('Status').selectOption('failed');
    await page.getByText('1 of 3 loaded runs are failed.').waitFor();
    await table.getByRole('link', { name: failed.processId }).click();
    await page.locator(`tr[data-node-id="${llm}"][data-status="failed"]`).waitFor();
    const failedCode = await page.locator(`tr[data-node-id="${llm}"] code`).innerText();
    expect(failedCode, "the node's error code").to.equal('PROVIDER_NOT_CONFIGURED');
    expect(await page.locator(`tr[data-node-id="${llm}"]`).innerText()).to.contain('Anthropic is not configured');
    expect(await page.getByTestId('run-status').getAttribute('data-status')).to.equal('failed');
    expect(await page.getByRole('alert').getAttribute('data-code'), "the run's failure").to.equal('NODE_FAILED');
    await keepScreenshot(page, '30-run-failed');
    await page.goBack();
    await page.getByLabel('Status').selectOption('stopped');
    await page.getByText('0 of 3 loaded runs are stopped.').waitFor();
    expect(await page.getByRole('table', { name: 'Runs of the flow' }).count(), 'no table when the filter leaves nothing').to.equal(0);

    await page.getByLabel('Status').selectOption('completed');
    await table.getByRole('link', { name: runs[0] }).click();
    await page.waitForURL(new RegExp(`/runs/${runs[0]}$`));
    const rows = page.locator('table.run-nodes tbody tr');
    await rows.first().waitFor();
    expect(await rows.count(), 'the run keeps the nodes it ran with').to.equal(2);
    for (const id of ids) expect(await page.locator(`tr[data-node-id="${id}"]`).getAttribute('data-status')).to.equal('completed');
    expect(await page.locator(`tr[data-node-id="${ids[1]}"]`).innerText()).to.contain('hi there!');
    expect(await page.getByTestId('run-status').getAttribute('data-status')).to.equal('completed');
    expect(await page.getByRole('link', { name: "Open the flow's canvas" }).getAttribute('href')).to.equal(`/flows/${flowId}`);
    await page.getByText('Event log').click();
    await page.getByRole('table', { name: 'Event log' }).locator('tr[data-type="RunCompleted"]').waitFor();
    expect(await page.getByRole('table', { name: 'Event log' }).locator('tr[data-type="NodeCompleted"]').count()).to.equal(2);
    await keepScreenshot(page, '30-run-completed');
  });

  it("pages a flow's runs: 20 first, the rest after More", async () => {
    const { flowId } = await newFlow('Busy', [{ nodeType: 'transform', template: 'n {{inputs.n}}' }]);
    for (let n = 0; n < 22; n++) await as('POST', `/flows/${flowId}/run`, { inputs: { n } });
    const page = await open();
    await page.goto(`${origin}/runs?flow=${flowId}`);
    const rows = page.getByRole('table', { name: 'Runs of the flow' }).locator('tbody tr');
    await page.getByText('20 of 20 loaded runs.').waitFor();
    expect(await rows.count()).to.equal(20);
    await page.getByRole('button', { name: 'More' }).click();
    await page.getByText('22 of 22 loaded runs.').waitFor();
    expect(await rows.count()).to.equal(22);
    expect(await page.getByRole('button', { name: 'More' }).count(), 'no page after the last').to.equal(0);
  });

  it('follows a running run live: its rows flip from running to completed without a reload', async () => {
    const { flowId, ids } = await newFlow('Slow greeter', [
      { nodeType: 'transform', template: 'hello {{inputs.q}}' },
      { nodeType: 'delay', delayMs: 4000 },
      { nodeType: 'transform', template: '{{previous}}, live' },
    ]);
    const started = await as('POST', `/flows/${flowId}/run`, { inputs: { q: 'you' }, async: true });
    await waitUntil('the run listed as running', async () => (await as('GET', '/processes/running')).items.some((r: { processId: string }) => r.processId === started.processId));
    const page = await open();
    await page.goto(`${origin}/runs`);
    const running = page.getByRole('table', { name: 'Running now' });
    const row = running.locator('tr', { has: page.getByRole('link', { name: started.processId }) });
    expect(await row.getByRole('link', { name: 'Slow greeter' }).getAttribute('href'), 'the flow by its name').to.equal(`/flows/${flowId}`);
    await row.getByRole('link', { name: started.processId }).click();
    await page.waitForURL(new RegExp(`/runs/${started.processId}$`));
    const delay = page.locator(`tr[data-node-id="${ids[1]}"]`);
    await page.locator(`tr[data-node-id="${ids[1]}"][data-status="running"]`).waitFor({ timeout: 10_000 });
    await markPage(page);
    expect(await page.locator(`tr[data-node-id="${ids[2]}"]`).getAttribute('data-status')).to.equal('pending');
    await page.getByText('Live: rows update as the run goes.').waitFor();
    await keepScreenshot(page, '31-run-live');
    await page.locator(`tr[data-node-id="${ids[2]}"][data-status="completed"]`).waitFor({ timeout: 15_000 });
    expect(await delay.getAttribute('data-status')).to.equal('completed');
    await page.locator('[data-testid="run-status"][data-status="completed"]').waitFor();
    expect(await page.locator(`tr[data-node-id="${ids[2]}"]`).innerText()).to.contain('hello you, live');
    expect(await stillMarked(page), 'the page was not reloaded').to.equal('not reloaded');
    await keepScreenshot(page, '31-run-live-completed');
  });

  it('stops a running run from its page: the run ends stopped live, the node after the delay never runs', async () => {
    const { flowId, ids } = await newFlow('Stoppable', [
      { nodeType: 'delay', delayMs: 5000 },
      { nodeType: 'transform', template: 'too late' },
    ]);
    const started = await as('POST', `/flows/${flowId}/run`, { inputs: {}, async: true });
    const page = await open();
    await page.goto(`${origin}/runs/${started.processId}`);
    await page.locator(`tr[data-node-id="${ids[0]}"][data-status="running"]`).waitFor({ timeout: 10_000 });
    await page.getByRole('button', { name: 'Stop run' }).click();
    await page.locator('[data-testid="run-status"][data-status="stopped"]').waitFor({ timeout: 15_000 });
    expect(await page.getByRole('button', { name: 'Stop run' }).count(), 'no Stop on a run that is over').to.equal(0);
    await keepScreenshot(page, '31-run-stopped');
    const run = (await as('GET', `/processes/${started.processId}`)).process;
    expect(run.status).to.equal('stopped');
    expect(run.nodes.find((n: { nodeId: string }) => n.nodeId === ids[1]).status).not.to.equal('completed');
  });

  it('signals a waiting workflow from its page and sees it complete live; pauses, resumes and cancels others', async () => {
    const { flowId } = await newFlow('Approval', [{ nodeType: 'wait_signal', signalName: 'approve' }]);
    const start = async () => (await as('POST', '/workflows', { flowId, input: { order: 7 } })).workflow.id as string;
    // `other` is signalled through the API: COMPLETED, so the RUNNING filter leaves it out.
    const [signalled, paused, canceled, other] = [await start(), await start(), await start(), await start()];
    for (const id of [signalled, paused, canceled, other]) await waitUntil(`${id} waiting`, async () => (await as('GET', `/workflows/${id}`)).workflow.waitingOn);
    await as('POST', `/workflows/${other}/signal`, { name: 'approve' });
    await waitUntil('the other completed', async () => (await workflowStatus(other)) === 'COMPLETED');

    const page = await open();
    await page.goto(`${origin}/workflows`);
    await page.getByRole('heading', { level: 1, name: 'Workflows' }).waitFor();
    await page.getByLabel('Status').selectOption('RUNNING');
    await page.waitForURL(/\/workflows\?status=RUNNING$/);
    const table = page.getByRole('table', { name: 'Workflows' });
    await table.getByRole('link', { name: signalled }).waitFor();
    expect(await table.getByRole('link', { name: other }).count(), 'a completed workflow is filtered out').to.equal(0);
    expect(await table.locator('tbody tr:not([data-status="RUNNING"])').count()).to.equal(0);
    await keepScreenshot(page, '32-workflows');

    await table.getByRole('link', { name: signalled }).click();
    await page.waitForURL(new RegExp(`/workflows/${signalled}$`));
    await page.locator('[data-testid="workflow-status"][data-status="RUNNING"]').waitFor();
    await page.getByText('The workflow waits for "approve".').waitFor();
    await page.getByText('Live: the history grows as the workflow goes.').waitFor();
    await markPage(page);
    await page.getByLabel('Signal name').fill('approve');
    await page.getByLabel('Payload (JSON)').fill('{"approved": true, "by": "alice"}');
    await page.getByRole('button', { name: 'Send signal' }).click();
    await page.locator('tr[data-type="SignalReceived"]').waitFor();
    await page.locator('tr[data-type="WorkflowCompleted"]').waitFor();
    await page.locator('[data-testid="workflow-status"][data-status="COMPLETED"]').waitFor();
    expect(await page.locator('tr[data-type="SignalReceived"]').innerText()).to.contain('"approved":true');
    expect(await stillMarked(page), 'the history grew without a reload').to.equal('not reloaded');
    expect(await workflowStatus(signalled)).to.equal('COMPLETED');
    await keepScreenshot(page, '33-workflow-signal');

    // A signal with a payload that is not JSON is refused on the page, before any request.
    await page.goto(`${origin}/workflows/${paused}`);
    await page.getByLabel('Signal name').fill('approve');
    await page.getByLabel('Payload (JSON)').fill('{not json');
    await page.getByRole('button', { name: 'Send signal' }).click();
    await page.getByRole('alert').filter({ hasText: 'Payload is not valid JSON' }).waitFor();
    expect(await workflowStatus(paused)).to.equal('RUNNING');

    await page.getByRole('button', { name: 'Pause' }).click();
    await waitUntil('paused', async () => (await workflowStatus(paused)) === 'PAUSED');
    await page.locator('[data-testid="workflow-status"][data-status="PAUSED"]').waitFor();
    await page.locator('tr[data-type="WorkflowPaused"]').waitFor();
    await keepScreenshot(page, '35-workflow-paused');
    await page.getByRole('button', { name: 'Resume' }).click();
    await waitUntil('resumed', async () => (await workflowStatus(paused)) === 'RUNNING');
    await page.locator('[data-testid="workflow-status"][data-status="RUNNING"]').waitFor();
    await page.locator('tr[data-type="WorkflowResumed"]').waitFor();

    await page.goto(`${origin}/workflows/${canceled}`);
    await page.getByRole('button', { name: 'Cancel workflow' }).click();
    expect(await workflowStatus(canceled), 'nothing happens before the confirmation').to.equal('RUNNING');
    await page.getByRole('button', { name: 'Yes, cancel it' }).click();
    await waitUntil('canceled', async () => (await workflowStatus(canceled)) === 'CANCELED');
    await page.locator('[data-testid="workflow-status"][data-status="CANCELED"]').waitFor();
    expect(await page.getByRole('button', { name: 'Send signal' }).count(), 'a closed workflow takes no signal').to.equal(0);
    await page.getByLabel('Query name').fill('status');
    await page.getByRole('button', { name: 'Ask' }).click();
    expect(await page.getByRole('status', { name: 'Query answer' }).innerText()).to.contain('CANCELED');
    await keepScreenshot(page, '36-workflow-canceled');

    // Started from the page: a flow and a JSON input, then the new workflow's own page.
    await page.goto(`${origin}/workflows`);
    await page.getByRole('button', { name: 'Start a workflow' }).click();
    await page.getByRole('combobox', { name: /^Flow to run/ }).selectOption({ label: 'Approval' });
    await page.getByLabel('Input (JSON)').fill('{"order": 9}');
    await page.getByRole('button', { name: 'Start', exact: true }).click();
    await page.waitForURL(/\/workflows\/wf_/);
    const startedId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
    await page.locator('[data-testid="workflow-status"][data-status="RUNNING"]').waitFor();
    expect((await as('GET', `/workflows/${startedId}`)).workflow.input).to.deep.equal({ order: 9 });
  });

  it('filters workflows by flow and pages them: 20 first, the rest after More', async () => {
    const carol = await registerUser(svc.baseUrl);
    const asCarol = async (method: string, path: string, body?: unknown) => (await call(svc.baseUrl, method, path, body, carol.auth)).body;
    const flowOf = async (name: string) => {
      const flowId = (await asCarol('POST', '/flows', { name })).flow.id as string;
      await asCarol('POST', `/flows/${flowId}/nodes`, node({ nodeType: 'wait_signal', signalName: 'go' }, 0));
      return flowId;
    };
    const [many, one] = [await flowOf('Many'), await flowOf('One')];
    for (let i = 0; i < 22; i++) expect((await asCarol('POST', '/workflows', { flowId: many })).success).to.equal(true);
    const lone = (await asCarol('POST', '/workflows', { flowId: one })).workflow.id as string;
    await waitUntil('all 23 listed', async () => (await asCarol('GET', `/workflows?limit=100`)).items.length === 23);
    const watched = await openConsole(browser, origin, { token: carol.token });
    opened.push(watched);
    const { page } = watched;
    await page.goto(`${origin}/workflows`);
    const rows = page.getByRole('table', { name: 'Workflows' }).locator('tbody tr');
    await page.getByRole('combobox', { name: /^Flow/ }).selectOption({ label: 'One' });
    await page.waitForURL(new RegExp(`/workflows\\?flow=${one}$`));
    await page.getByRole('table', { name: 'Workflows' }).getByRole('link', { name: lone }).waitFor();
    expect(await rows.count()).to.equal(1);
    await page.getByRole('combobox', { name: /^Flow/ }).selectOption({ label: 'Many' });
    await page.getByRole('button', { name: 'More' }).waitFor();
    expect(await rows.count()).to.equal(20);
    await page.getByRole('button', { name: 'More' }).click();
    await waitUntil('22 rows', async () => (await rows.count()) === 22);
    expect(await page.getByRole('button', { name: 'More' }).count()).to.equal(0);
    expect(await page.getByRole('table', { name: 'Workflows' }).getByRole('link', { name: lone }).count()).to.equal(0);
  });

  it('chats with an agent: the answer streams in, with the tool call it made', async () => {
    const agent = (await as('POST', '/agents', { name: 'Weather helper', provider: 'openai', model: 'gpt-4o', instructions: 'Be brief.', tools: [{ kind: 'memory' }] })).agent;
    fake.text = 'It is sunny in Lisbon today, with a light breeze from the sea.';
    fake.streamDelayMs = 120;
    fake.toolCalls = [{ name: 'memory_search', input: { query: 'weather' } }];
    fake.toolRounds = 1;

    const page = await open();
    await page.goto(`${origin}/agents`);
    await page.getByRole('link', { name: 'Weather helper' }).click();
    await page.waitForURL(new RegExp(`/agents/${agent.id}$`));
    await page.getByRole('heading', { level: 1, name: 'Chat with Weather helper' }).waitFor();
    await page.getByRole('button', { name: 'New session' }).click();
    await page.waitForURL(/\?session=/);
    await page.getByLabel('Message').fill('What is the weather in Lisbon?');
    await page.getByRole('button', { name: 'Send' }).click();
    // Part of the answer shows while the rest is still coming.
    const answer = page.getByLabel('Answer');
    await page.waitForFunction(() => {
      const el = document.querySelector('[data-streaming="true"] p');
      return !!el && /\S/.test(el.textContent ?? '') && el.textContent !== '…' && !(el.textContent ?? '').includes('breeze');
    });
    await page.locator('.agent-tool[data-tool="memory_search"]').waitFor();
    await keepScreenshot(page, '34-agent-chat-streaming');
    await page.locator('[data-streaming="false"]').filter({ hasText: 'light breeze from the sea.' }).waitFor({ timeout: 20_000 });
    expect(await answer.count()).to.equal(1);
    expect(await page.locator('.agent-tool[data-tool="memory_search"]').innerText()).to.contain('memory_search');
    await page.getByText('What is the weather in Lisbon?').waitFor();
    await keepScreenshot(page, '34-agent-chat');
    const sessions = (await as('GET', `/agents/${agent.id}/sessions`)).items;
    expect(sessions).to.have.length(1);
    expect(sessions[0].messageCount).to.equal(1);

    // From the keyboard: Ctrl+Enter sends; Stop ends the turn while it streams, keeping what came.
    fake.toolCalls = [];
    fake.streamDelayMs = 400;
    fake.text = 'one two three four five six seven eight nine ten eleven twelve thirteen fourteen';
    await page.getByLabel('Message').focus();
    await page.keyboard.type('Count slowly');
    await page.keyboard.press('Control+Enter');
    await page.getByRole('button', { name: 'Stop' }).waitFor();
    await page.waitForFunction(() => /two/.test(document.querySelector('[data-streaming="true"] p')?.textContent ?? ''));
    await page.getByRole('button', { name: 'Stop' }).click();
    await page.getByText('Stopped: cancelled').waitFor({ timeout: 20_000 });
    const second = (await as('GET', `/agents/${agent.id}/sessions/${sessions[0].id}`)).session.messages[1];
    expect(second.answer.finishReason).to.equal('cancelled');
    expect(second.answer.text).to.contain('two').and.not.contain('fourteen');
    await keepScreenshot(page, '34-agent-chat-stopped');

    // A turn sent elsewhere (here: the API) while the page is reloaded is followed from the log.
    fake.streamDelayMs = 300;
    fake.text = 'alpha beta gamma delta epsilon zeta eta theta';
    const elsewhere = as('POST', `/agents/${agent.id}/sessions/${sessions[0].id}/messages`, { content: 'Sent from another tab' });
    await waitUntil('the turn running', async () => (await as('GET', `/agents/${agent.id}/sessions/${sessions[0].id}`)).session.running);
    await page.reload();
    await page.locator('.agent-turn', { hasText: 'Sent from another tab' }).locator('[data-streaming="true"]').waitFor();
    await page.locator('.agent-turn', { hasText: 'Sent from another tab' }).locator('[data-streaming="false"]', { hasText: 'eta theta' }).waitFor({ timeout: 20_000 });
    await elsewhere;
    expect(await page.locator('.agent-turn').count(), 'each exchange once').to.equal(3);
  });
  it("shows the new session's data when the token changes (another tab signs in as someone else)", async () => {
    const bob = await registerUser(svc.baseUrl);
    const watched = await openConsole(browser, origin, { token: alice.token });
    opened.push(watched);
    const { page, context } = watched;
    await page.goto(`${origin}/workflows`);
    await page.getByRole('table', { name: 'Workflows' }).waitFor();
    const other = await context.newPage();
    await other.goto(`${origin}/runs`);
    await other.evaluate((token) => localStorage.setItem('flows.console.token', token), bob.token);
    await page.getByText('No workflow yet.').waitFor();
    expect(await page.getByRole('table', { name: 'Workflows' }).count(), "none of alice's workflows").to.equal(0);
    await other.close();
  });

  it('fits a phone-width screen: the runs, workflow and chat pages do not scroll sideways', async () => {
    const { flowId } = await newFlow('Phone flow with a rather long name to wrap', [{ nodeType: 'transform', template: '{{inputs.q}} '.repeat(20) }]);
    const run = await as('POST', `/flows/${flowId}/run`, { inputs: { q: 'a-long-unbroken-word-that-must-wrap-somewhere' } });
    const waiting = await newFlow('Phone workflow', [{ nodeType: 'wait_signal', signalName: 'go' }]);
    const workflow = (await as('POST', '/workflows', { flowId: waiting.flowId, input: {} })).workflow.id;
    const agent = (await as('POST', '/agents', { name: 'Phone helper', provider: 'offline', model: 'offline' })).agent;
    const session = (await as('POST', `/agents/${agent.id}/sessions`, {})).session;
    await as('POST', `/agents/${agent.id}/sessions/${session.id}/messages`, { content: 'hello from a small screen' });
    const watched = await openConsole(browser, origin, { token: alice.token, viewport: { width: 375, height: 740 } });
    opened.push(watched);
    const { page } = watched;
    const pages: Array<[string, string]> = [
      [`/runs?flow=${flowId}`, '37-phone-runs'],
      [`/runs/${run.processId}`, '37-phone-run'],
      [`/workflows`, '37-phone-workflows'],
      [`/workflows/${workflow}`, '37-phone-workflow'],
      [`/agents/${agent.id}?session=${session.id}`, '37-phone-agent-chat'],
    ];
    for (const [path, shot] of pages) {
      await page.goto(`${origin}${path}`);
      await page.getByRole('heading', { level: 1 }).waitFor();
      await page.locator('table, .agent-turn').first().waitFor();
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      await keepScreenshot(page, shot);
      expect(overflow, `horizontal overflow of ${path} in px`).to.be.at.most(0);
    }
  });
});
