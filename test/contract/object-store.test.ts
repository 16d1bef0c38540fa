/**
 * Runs the ObjectStore contract on the local store (served by the service's GET /objects/{key}, with
 * a test clock) and on the S3 adapter against the S3-compatible server of .ci/servers.sh (S3_ENDPOINT).
 */
import { randomBytes } from 'node:crypto';
import { S3ObjectStore } from '../../infra/object-store/s3.js';
import { TestClock } from '../support/clock.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { objectStoreContract } from './object-store.contract.js';

async function download(url: string) {
  const res = await fetch(url);
  const body = Buffer.from(await res.arrayBuffer());
  let json: any;
  if (/json/.test(res.headers.get('content-type') ?? '')) json = JSON.parse(body.toString());
  return { status: res.status, headers: res.headers, body, json };
}

objectStoreContract('local (DATA_DIR/objects, signed URLs served by the service)', async () => {
  const clock = new TestClock();
  const service: TestService = await startTestService('embedded', {}, { clock });
  const origin = new URL(service.baseUrl).origin;
  return {
    store: service.services.objects,
    advance: (seconds) => clock.advance(seconds * 1000),
    download: (url) => download(new URL(url, origin).toString()),
    enforcesExpiry: true,
    close: () => service.stop(),
  };
});

if (process.env.S3_ENDPOINT) {
  objectStoreContract(`s3 (${process.env.S3_ENDPOINT})`, async () => {
    const clock = new TestClock();
    const store = new S3ObjectStore({
      endpoint: process.env.S3_ENDPOINT,
      bucket: process.env.S3_BUCKET ?? 'flow-test',
      region: process.env.S3_REGION ?? 'us-east-1',
      accessKeyId: process.env.S3_ACCESS_KEY_ID ?? 'test',
      secretAccessKey: process.env.S3_SECRET_ACCESS_KEY ?? 'test',
      forcePathStyle: true,
      prefix: `t${randomBytes(4).toString('hex')}/`,
      now: () => clock.now(),
    });
    return {
      store,
      advance: (seconds) => clock.advance(seconds * 1000),
      download,
      // gofakes3 (the CI's server) accepts any signature; a real S3 answers 403 past X-Amz-Expires.
      enforcesExpiry: process.env.S3_ENFORCES_SIGNATURES === 'true',
      close: async () => store.close(),
    };
  });
} else if (process.env.REQUIRE_SERVERS === 'true') {
  describe('ObjectStore contract: s3', () => {
    it('has a server to run against', () => {
      throw new Error('S3_ENDPOINT is required when REQUIRE_SERVERS=true (bash .ci/servers.sh start)');
    });
  });
} else {
  console.log('SKIP ObjectStore contract on S3: S3_ENDPOINT is not set');
}
