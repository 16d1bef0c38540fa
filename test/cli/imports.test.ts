import { expect } from 'chai';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { root } from './support.js';

/**
 * flowctl is a pure HTTP client: its files import only each other, the generated API client (`client/`),
 * Node built-ins and its runtime npm dependencies; `client/` imports only itself and runtime dependencies.
 */
describe('flowctl imports', () => {
  const cliDir = join(root, 'cli');
  const clientDir = join(root, 'client');
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? walk(path) : path.endsWith('.ts') ? [path] : [];
    });
  const files = walk(cliDir);
  const clientFiles = walk(clientDir);
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

  it('stays inside cli/ (and the generated client/) and uses only runtime dependencies', () => {
    expect(files.length).to.be.greaterThan(5);
    expect(clientFiles.map((f) => relative(root, f))).to.include.members(['client/index.ts', 'client/schema.d.ts']);
    const problems: string[] = [];
    for (const file of [...files, ...clientFiles]) {
      const inClient = file.startsWith(`${clientDir}/`);
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)) {
        const spec = m[1] ?? m[2];
        const where = relative(root, file);
        if (spec.startsWith('.')) {
          const target = resolve(dirname(file), spec);
          const allowed = inClient ? target.startsWith(`${clientDir}/`) : target.startsWith(`${cliDir}/`) || target.startsWith(`${clientDir}/`);
          if (!allowed) problems.push(`${where} imports ${spec} (outside ${inClient ? 'client/' : 'cli/ and client/'})`);
        } else if (spec.startsWith('node:') || builtinModules.includes(spec)) {
          continue;
        } else {
          const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];
          if (!pkg.dependencies?.[name]) problems.push(`${where} imports ${spec}, which is not a runtime dependency in package.json`);
        }
      }
    }
    expect(problems).to.deep.equal([]);
  });

  it('is shipped as the flowctl bin', () => {
    expect(pkg.bin).to.deep.include({ flowctl: 'bin/flowctl' });
    expect(statSync(join(root, 'bin', 'flowctl')).mode & 0o111, 'executable').to.not.equal(0);
  });
});
