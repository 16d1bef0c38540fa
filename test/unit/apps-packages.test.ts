import { expect } from 'chai';
import { APP_PACKAGE_SPECIFIERS, isAllowedAppImport, isBareImport, packageNotAllowedMessage } from '../../domain/apps/packages.js';
import { createAppBuilder } from '../../infra/apps/builder.js';
import type { AppBuildResult } from '../../ports/app-delivery.js';

// The package allowlist of app builds: the pure rule, then esbuild in its worker resolving the
// allowed packages from the service's node_modules and refusing the rest at file and line.

const contract = { input: {}, output: {} };
const builder = createAppBuilder({ timeoutMs: 20_000, maxOutputBytes: 20 * 1024 * 1024 });
const build = (files: Record<string, string>) =>
  builder.build({ contract, files: Object.entries(files).map(([path, content]) => ({ path, content, encoding: 'utf8' as const })) });
const bundle = (result: AppBuildResult, path = 'main.js') => {
  if (!result.ok) expect.fail(`build failed: ${result.code} ${result.message}`);
  return result.site.files.get(path)!.body.toString('utf8');
};

describe('apps: the package allowlist (rule)', () => {
  it('tells bare imports from the app\'s own files and URLs', () => {
    expect(['preact', 'chart.js/auto', '@scope/x', 'lodash/fp'].every(isBareImport)).to.equal(true);
    expect(['./a', '../b', '/c', 'https://cdn.example/x.js', 'node:fs', '//cdn.example/x.js'].some(isBareImport)).to.equal(false);
  });

  it('allows exactly the listed specifiers, not another path into the same package', () => {
    for (const spec of ['preact', 'preact/hooks', 'preact/jsx-runtime', 'react', 'react-dom/client', 'react/jsx-runtime', 'chart.js', 'chart.js/auto']) {
      expect(isAllowedAppImport(spec), spec).to.equal(true);
    }
    for (const spec of ['lodash', 'preact/src/index.js', 'react-dom/server', 'esbuild', 'better-sqlite3', 'chart.js/../../package.json']) {
      expect(isAllowedAppImport(spec), spec).to.equal(false);
    }
  });

  it('names the specifier and the whole list in the refusal', () => {
    const text = packageNotAllowedMessage('lodash');
    expect(text).to.match(/^PACKAGE_NOT_ALLOWED: cannot import "lodash"/);
    for (const spec of APP_PACKAGE_SPECIFIERS) expect(text).to.contain(spec);
  });
});

describe('apps: the package allowlist (esbuild in the build worker)', function () {
  this.timeout(60_000);

  it('bundles preact with its hooks and automatic JSX, and chart.js, from the service\'s node_modules', async () => {
    const result = await build({
      'index.html': '<div id="root"></div><canvas id="c"></canvas><script src="main.tsx"></script>',
      'main.tsx': '/** @jsxRuntime automatic */\n/** @jsxImportSource preact */\nimport { render } from "preact";\nimport { useState } from "preact/hooks";\n' +
        'import Chart from "chart.js/auto";\nimport { title } from "./title";\nfunction App() { const [n] = useState(1); return <p>{title}{n}</p>; }\n' +
        'render(<App />, document.getElementById("root")!);\nnew Chart(document.getElementById("c") as HTMLCanvasElement, { type: "bar", data: { labels: ["a"], datasets: [{ data: [1] }] } });\n',
      'title.ts': 'export const title = "Sales: ";\n',
    });
    const js = bundle(result);
    expect(js).to.contain('Sales: '); // the relative import still comes from the app's files
    expect(js).to.match(/node_modules\/preact\/hooks\//); // esbuild's path comments name each bundled module
    expect(js).to.match(/node_modules\/preact\/jsx-runtime\//);
    expect(js).to.match(/node_modules\/chart\.js\/dist\//);
    expect(js).to.match(/node_modules\/@kurkle\/color\//); // chart.js's own dependency, resolved by esbuild
    expect(js).not.to.contain('process.env.NODE_ENV');
  });

  it('bundles React\'s production build with react-dom/client and automatic JSX (react/jsx-runtime)', async () => {
    const js = bundle(await build({
      'index.html': '<script src="main.tsx"></script>',
      'main.tsx': '/** @jsxRuntime automatic */\nimport { createRoot } from "react-dom/client";\ncreateRoot(document.body).render(<p>hi</p>);\n',
    }));
    expect(js).to.match(/node_modules\/react-dom\/cjs\/react-dom-client\.production\.js/);
    expect(js).to.match(/node_modules\/react\/cjs\/react\.production\.js/);
    expect(js).to.match(/node_modules\/react\/cjs\/react-jsx-runtime\.production\.js/);
    expect(js).not.to.match(/\.development\.js/);
  });

  it('refuses lodash as PACKAGE_NOT_ALLOWED at its file and line, naming the list', async () => {
    const result = await build({
      'index.html': '<script src="main.ts"></script>',
      'main.ts': 'import { a } from "./a";\nimport _ from "lodash";\nconsole.log(a, _);\n',
      'a.ts': 'export const a = 1;\n',
    });
    if (result.ok) expect.fail('lodash was bundled');
    expect(result.code).to.equal('PACKAGE_NOT_ALLOWED');
    expect(result.problems).to.have.length(1);
    expect(result.problems[0]).to.include({ file: 'main.ts', line: 2 });
    expect(result.message).to.contain('main.ts:2:').and.contain('"lodash"').and.contain('preact/hooks').and.contain('chart.js');
    expect(result.allowedPackages).to.deep.equal(APP_PACKAGE_SPECIFIERS);
  });

  it('refuses a deep path into an allowed package and a server package alike', async () => {
    for (const spec of ['preact/src/index.js', 'esbuild']) {
      const result = await build({ 'index.html': '<script src="main.ts"></script>', 'main.ts': `import x from "${spec}";\nconsole.log(x);\n` });
      expect(result.ok, spec).to.equal(false);
      if (!result.ok) expect(result.code, spec).to.equal('PACKAGE_NOT_ALLOWED');
    }
  });

  it('keeps a URL import a plain build error: nothing is downloaded', async () => {
    const result = await build({ 'index.html': '<script src="main.ts"></script>', 'main.ts': 'import x from "https://cdn.example/x.js";\nconsole.log(x);\n' });
    if (result.ok) expect.fail('a URL was bundled');
    expect(result.code).to.equal('APP_BUILD_FAILED');
    expect(result.message).to.contain('URLs are never fetched');
  });
});
