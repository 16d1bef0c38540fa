/**
 * The web console talks to the service only through the generated typed client (issue 35): its
 * sources import nothing of the service's layers, only web/src, client/ and the packages below; and
 * a bare `fetch(` appears only where a Server-Sent Events stream is read (the typed client cannot).
 */
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
const WEB = join(ROOT, 'web', 'src');
const PACKAGES = ['react', 'react-dom', 'react/jsx-runtime', 'wouter', '@xyflow/react', 'eventsource-parser', 'openapi-fetch'];

function* files(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* files(path);
    else if (/\.(ts|tsx)$/.test(entry.name)) yield path;
  }
}

describe('web console imports', () => {
  const sources = [...files(WEB)];

  it('finds the console sources', () => {
    expect(sources.length).to.be.greaterThan(5);
  });

  it('imports only web/src, client/ and its packages', () => {
    const problems: string[] = [];
    for (const file of sources) {
      const text = readFileSync(file, 'utf8');
      for (const match of text.matchAll(/(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\s+['"]([^'"]+)['"]/g)) {
        const spec = match[1] ?? match[2]!;
        const where = relative(ROOT, file);
        if (spec.startsWith('.')) {
          const target = relative(ROOT, resolve(dirname(file), spec));
          if (!target.startsWith('web/src') && !target.startsWith('client/')) problems.push(`${where} imports ${spec} (${target})`);
        } else if (!PACKAGES.some((p) => spec === p || spec.startsWith(`${p}/`))) {
          problems.push(`${where} imports the package ${spec}, not in the console's list`);
        }
      }
    }
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });

  it('calls fetch directly only to read event streams', () => {
    const direct = sources.filter((file) => /\bfetch\(/.test(readFileSync(file, 'utf8')));
    const notStreams = direct.filter((file) => !/text\/event-stream/.test(readFileSync(file, 'utf8')));
    expect(notStreams.map((f) => relative(ROOT, f))).to.deep.equal([]);
  });
});
