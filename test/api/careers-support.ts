import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { call, checkResponse } from '../support/http.js';

/** Helpers of the careers API tests (careers.test.ts, careers-shredding.test.ts): PDFs, multipart posts, the object store per mode. */

export async function makePdf(lines: string[], pages = 1): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let p = 0; p < pages; p++) {
    const page = doc.addPage([595, 842]);
    lines.forEach((line, i) => page.drawText(line, { x: 50, y: 780 - i * 20, size: 12, font }));
  }
  return Buffer.from(await doc.save());
}

export type Part = { name: string; value: string } | { name: string; filename: string; contentType: string; data: Buffer };

function multipartBody(parts: Part[], boundary: string): Buffer {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    if ('data' in part) {
      chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"; filename="${part.filename}"\r\nContent-Type: ${part.contentType}\r\n\r\n`));
      chunks.push(part.data, Buffer.from('\r\n'));
    } else {
      chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"\r\n\r\n${part.value}\r\n`));
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

/** POSTs a multipart body from `localAddress` (per-IP limits) and checks the answer against the OpenAPI document. */
export function postForm(baseUrl: string, parts: Part[], localAddress = '127.0.0.1', contentType?: string) {
  const boundary = `----test${randomBytes(8).toString('hex')}`;
  const body = multipartBody(parts, boundary);
  const url = new URL(`${baseUrl}/careers/applications`);
  return new Promise<{ status: number; headers: Record<string, unknown>; body: any; text: string }>((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', localAddress, headers: { 'content-type': contentType ?? `multipart/form-data; boundary=${boundary}`, 'content-length': body.length } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          let json: any;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          checkResponse('POST', url.toString(), res.statusCode!, String(res.headers['content-type'] ?? ''), text, json);
          resolve({ status: res.statusCode!, headers: res.headers, body: json, text });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

/** Distributed mode keeps CVs in the S3-compatible server of .ci/servers.sh (when it runs); embedded mode in DATA_DIR/objects. */
export function objectStoreEnv(mode: string): Record<string, string> {
  if (mode !== 'distributed' || !process.env.S3_ENDPOINT) return {};
  const keys = ['S3_ENDPOINT', 'S3_BUCKET', 'S3_REGION', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY'] as const;
  return { OBJECT_STORE: 's3', S3_PREFIX: `careers-test-${randomBytes(4).toString('hex')}/`, ...Object.fromEntries(keys.filter((k) => process.env[k]).map((k) => [k, process.env[k]!])) };
}


/** Publishes a vacancy in the organization `auth` is switched to (a manager's token); answers its id. */
export async function publishVacancy(baseUrl: string, auth: Record<string, string>, body: Record<string, unknown> = {}): Promise<string> {
  const res = await call(baseUrl, 'POST', '/careers/vacancies', { title: 'Backend engineer', description: 'Queues and logs.', ...body }, auth);
  if (res.status !== 201) throw new Error(`publishing a vacancy answered ${res.status}: ${res.text}`);
  return res.body.vacancy.id as string;
}
