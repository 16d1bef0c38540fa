import { expect } from 'chai';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { root } from './support.js';

/** flowctl is a pure HTTP client: its files import only each other, Node built-ins and its runtime npm dependencies. */
describe('flowctl imports', () => {
  const cliDir = join(root, 'cli');
  const files = (function walk(dir: string): string[] {
    return readdirSync(dir).flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? walk(path) : path.endsWith('.ts') ? [path] : [];
    });
  })(cliDir);
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

  it('stays inside cli/ and uses only runtime dependencies', () => {
    expect(files.length).to.be.greaterThan(5);
    const problems: string[] = [];
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)) {
        const spec = m[1] ?? m[2];
        const where = relative(root, file);
        if (spec.startsWith('.')) {
          const target = resolve(dirname(file), spec);
          if (!target.startsWith(`${cliDir}/`)) problems.push(`${where} imports ${spec} (outside cli/)`);
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
