import { expect } from 'chai';
import { APP_PACKAGE_SPECIFIERS } from '../../domain/apps/packages.js';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';
import { greeterFlow, seedApp, waitForDeployment } from './apps-deploy-support.js';

// Apps can use packages (issue 36 item 7): the list is in an API answer; a deployment bundles
// preact and chart.js from the service's node_modules; lodash fails the build naming the list.

const CHART_APP = [
  { path: 'index.html', content: '<!doctype html><div id="root"></div><canvas id="chart"></canvas><script src="src/main.tsx"></script>' },
  {
    path: 'src/main.tsx',
    content: '/** @jsxRuntime automatic */\n/** @jsxImportSource preact */\nimport { render } from "preact";\nimport { useState } from "preact/hooks";\n' +
      'import Chart from "chart.js/auto";\nfunction Total() { const [n] = useState(3); return <p id="total">{n}</p>; }\n' +
      'render(<Total />, document.getElementById("root")!);\n' +
      'new Chart(document.getElementById("chart") as HTMLCanvasElement, { type: "line", data: { labels: ["a", "b"], datasets: [{ data: [1, 2] }] } });\n',
  },
];

const LODASH_APP = [
  { path: 'index.html', content: '<!doctype html><script src="main.ts"></script>' },
  { path: 'main.ts', content: 'import { render } from "preact";\nimport chunk from "lodash/chunk";\nconsole.log(render, chunk([1, 2], 1));\n' },
];

for (const mode of availableModes()) {
  describe(`apps: packages an app may import (${mode})`, function () {
    this.timeout(120_000);
    let svc: TestService;
    let owner: RegisteredUser;
    let flowId: string;

    before(async () => {
      svc = await startTestService(mode);
      owner = await registerUser(svc.baseUrl);
      flowId = await greeterFlow(svc, owner);
    });
    after(async () => svc?.stop());

    it('lists the allowed packages (not taken for an app id)', async () => {
      const res = await call(svc.baseUrl, 'GET', '/apps/packages', undefined, owner.auth);
      expect(res.status, res.text).to.equal(200);
      expect(res.body.packages.map((p: { name: string }) => p.name)).to.deep.equal(['preact', 'react', 'react-dom', 'chart.js']);
      expect(res.body.specifiers).to.deep.equal(APP_PACKAGE_SPECIFIERS);
      expect((await call(svc.baseUrl, 'GET', '/apps/packages')).status).to.equal(401);
    });

    it('deploys an app importing preact and chart.js: the public bundle holds both', async () => {
      const appId = await seedApp(svc, owner, CHART_APP, flowId);
      const asked = await call(svc.baseUrl, 'POST', `/apps/${appId}/deploy`, {}, owner.auth);
      expect(asked.status, asked.text).to.equal(202);
      const ready = await waitForDeployment(svc, owner, appId);
      expect(ready.status, JSON.stringify(ready.latest?.error)).to.equal('READY');
      const js = await (await fetch(`${ready.url}src/main.js`)).text();
      expect(js).to.match(/node_modules\/preact\/hooks\//);
      expect(js).to.match(/node_modules\/chart\.js\/dist\//);
      expect(js).to.contain('getElementById("chart")');
    });

    it('fails a deployment importing lodash as PACKAGE_NOT_ALLOWED naming the list, and refuses its preview alike', async () => {
      const appId = await seedApp(svc, owner, LODASH_APP, flowId);
      await call(svc.baseUrl, 'POST', `/apps/${appId}/deploy`, {}, owner.auth);
      const failed = await waitForDeployment(svc, owner, appId);
      expect(failed.status).to.equal('ERROR');
      expect(failed.latest.error.code).to.equal('PACKAGE_NOT_ALLOWED');
      expect(failed.latest.error.message).to.contain('main.ts:2:').and.contain('"lodash/chunk"').and.contain('preact/hooks, preact/jsx-runtime, react');
      expect(failed.latest.error.problems[0]).to.include({ file: 'main.ts', line: 2 });

      const preview = await call(svc.baseUrl, 'POST', `/apps/${appId}/preview`, undefined, owner.auth);
      expect(preview.status, preview.text).to.equal(422);
      expect(preview.body.error.code).to.equal('PACKAGE_NOT_ALLOWED');
      expect(preview.body.error.details.allowedPackages).to.deep.equal(APP_PACKAGE_SPECIFIERS);
    });
  });
}
