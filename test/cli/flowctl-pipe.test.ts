/**
 * flowctl as one step of a pipe: a reader that stops early (`flowctl --help | head -1`) closes the
 * pipe, and flowctl ends quietly with 0 instead of an EPIPE stack trace.
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { flowctlBin, root } from './support.js';

describe('flowctl in a pipe', function () {
  this.timeout(60_000);

  it('ends quietly when the reader closes the pipe early', () => {
    // Enough output to outlast the pipe's buffer after the reader is gone: the help of every command.
    const script = `for i in 1 2 3 4 5 6 7 8; do "${process.execPath}" "${flowctlBin}" --help; done | head -c 1 >/dev/null; "${process.execPath}" "${flowctlBin}" help runs | head -n 1; echo "status \${PIPESTATUS[0]}"`;
    const result = spawnSync('bash', ['-c', script], { cwd: root, encoding: 'utf8' });
    expect(result.stderr, 'stderr').not.to.match(/EPIPE|Unhandled 'error' event/);
    expect(result.stdout).to.match(/^Usage: flowctl runs/m);
    expect(result.stdout).to.contain('status 0');
  });
});
