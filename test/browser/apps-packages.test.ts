import { expect } from 'chai';
import { chromium, type Browser } from 'playwright-core';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { greeterFlow, seedApp, waitForDeployment } from '../api/apps-deploy-support.js';

/**
 * Deployed apps that import allowed packages run in a real browser (Debian's Chromium): Preact
 * renders with hooks and Chart.js draws on its canvas; React (its production build) renders
 * through react-dom/client with the automatic JSX runtime.
 * Embedded mode only, as test/browser/apps.test.ts: the browser sees the same HTTP either way.
 */
const PREACT_CHART_APP = [
  { path: 'index.html', content: '<!doctype html><div id="root"></div><div style="width:300px;height:150px"><canvas id="chart"></canvas></div><script src="main.tsx"></script>' },
  {
    path: 'main.tsx',
    content: '/** @jsxRuntime automatic */\n/** @jsxImportSource preact */\nimport { render } from "preact";\nimport { useState } from "preact/hooks";\nimport Chart from "chart.js/auto";\n' +
      'function Total() { const [n] = useState(3); return <p id="total">total {n}</p>; }\nrender(<Total />, document.getElementById("root")!);\n' +
      'const chart = new Chart(document.getElementById("chart") as HTMLCanvasElement, { type: "bar", options: { animation: false, responsive: false }, data: { labels: ["a", "b"], datasets: [{ data: [1, 2] }] } });\n' +
      'document.body.dataset.chart = String(chart.data.datasets[0].data.length);\n',
  },
];

const REACT_APP = [
  { path: 'index.html', content: '<!doctype html><div id="root"></div><script src="main.tsx"></script>' },
  { path: 'main.tsx', content: '/** @jsxRuntime automatic */\nimport { createRoot } from "react-dom/client";\ncreateRoot(document.getElementById("root")!).render(<p id="hello">hello from React</p>);\n' },
];

describe('apps importing packages, in a browser (embedded)', function () {
  this.timeout(120_000);
  let svc: TestService;
  let owner: RegisteredUser;
  let browser: Browser;
  let flowId: string;

  before(async () => {
    svc = await startTestService('embedded');
    owner = await registerUser(svc.baseUrl);
    flowId = await greeterFlow(svc, owner);
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
  });
  after(async () => {
    await browser?.close();
    await svc?.stop();
  });

  async function openDeployed(files: Array<{ path: string; content: string }>) {
    const appId = await seedApp(svc, owner, files, flowId);
    expect((await call(svc.baseUrl, 'POST', `/apps/${appId}/deploy`, {}, owner.auth)).status).to.equal(202);
    const deployed = await waitForDeployment(svc, owner, appId);
    expect(deployed.status, JSON.stringify(deployed.latest?.error)).to.equal('READY');
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    expect((await page.goto(deployed.url))!.status()).to.equal(200);
    return { page, errors };
  }

  it('renders a Preact component with hooks and draws a Chart.js chart', async () => {
    const { page, errors } = await openDeployed(PREACT_CHART_APP);
    await page.waitForSelector('#total');
    expect(await page.textContent('#total')).to.equal('total 3');
    await page.waitForSelector('body[data-chart="2"]');
    // Chart.js sizes its canvas when it draws; an untouched canvas keeps the default 300×150 attributes and no style.
    expect(await page.getAttribute('#chart', 'style')).to.contain('width');
    expect(errors).to.deep.equal([]);
    await page.close();
  });

  it('renders React through react-dom/client', async () => {
    const { page, errors } = await openDeployed(REACT_APP);
    await page.waitForSelector('#hello');
    expect(await page.textContent('#hello')).to.equal('hello from React');
    expect(errors).to.deep.equal([]);
    await page.close();
  });
});
