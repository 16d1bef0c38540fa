import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';

/**
 * A local server speaking OpenAI's embeddings wire format (`POST /v1/embeddings` with
 * `{model, input: string | string[]}` → `{object: "list", data: [{object: "embedding", index,
 * embedding}], model, usage}`), for memory search tests. Its vectors are a toy "meaning": each
 * word counts in the dimension of its concept (a small synonym table below), other words in a
 * hashed dimension of their own, L2-normalised. So "insomnia" is close to "sleeping" although
 * they share no letters, which is what a real model gives and lexical ranking cannot.
 */
const CONCEPTS: Record<string, string[]> = {
  sleep: ['sleep', 'sleeping', 'slept', 'insomnia', 'tired', 'rest', 'nap'],
  allergy: ['allergy', 'allergies', 'allergic', 'intolerant', 'intolerance', 'coeliac'],
  travel: ['travel', 'travelling', 'traveling', 'trip', 'journey', 'flying', 'flight', 'flights', 'train', 'camping', 'holiday', 'vacation'],
  pet: ['pet', 'pets', 'cat', 'cats', 'dog', 'dogs', 'puppy', 'kitten'],
  drink: ['drink', 'drinks', 'coffee', 'tea', 'wine', 'beverage', 'caffeine'],
  job: ['job', 'work', 'works', 'career', 'profession', 'engineer', 'lawyer', 'teacher', 'teaches', 'startup'],
  family: ['family', 'children', 'kids', 'son', 'daughter', 'wife', 'husband', 'sister', 'parents', 'twins'],
  car: ['car', 'automobile', 'vehicle', 'volvo', 'drives', 'drive'],
  music: ['music', 'piano', 'guitar', 'instrument', 'song'],
  food: ['food', 'eat', 'eats', 'meal', 'dinner', 'lunch', 'sushi', 'bread', 'diet', 'vegetarian', 'meat', 'fish'],
  seat: ['seat', 'seats', 'aisle', 'window'],
};
const CONCEPT_OF = new Map(Object.entries(CONCEPTS).flatMap(([concept, words]) => words.map((w) => [w, concept] as const)));
export const FAKE_EMBEDDING_DIMENSIONS = 256;

function dimensionOf(key: string): number {
  return createHash('sha256').update(key).digest().readUInt32BE(0) % FAKE_EMBEDDING_DIMENSIONS;
}

export function fakeEmbedding(text: string): number[] {
  const vector = new Array<number>(FAKE_EMBEDDING_DIMENSIONS).fill(0);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    const concept = CONCEPT_OF.get(word);
    // Concepts weigh more than plain words: they are what the toy model "understands".
    vector[dimensionOf(concept ? `concept:${concept}` : `word:${word}`)] += concept ? 3 : 1;
  }
  const norm = Math.sqrt(vector.reduce((s, x) => s + x * x, 0)) || 1;
  return vector.map((x) => x / norm);
}

export interface FakeEmbeddingsServer {
  /** Base URL to put in MEMORY_EMBEDDINGS_URL (`…/v1`). */
  baseUrl: string;
  requests: Array<{ model: string; inputs: string[]; authorization: string | undefined }>;
  /** The next n requests answer HTTP 500. */
  failNext(n: number): void;
  close(): Promise<void>;
}

const bodyOf = (req: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });

export async function startFakeEmbeddings(): Promise<FakeEmbeddingsServer> {
  const requests: FakeEmbeddingsServer['requests'] = [];
  let failures = 0;
  const server: Server = createServer(async (req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method !== 'POST' || req.url !== '/v1/embeddings') return send(404, { error: { message: 'not found', type: 'invalid_request_error' } });
    const body = JSON.parse(await bodyOf(req)) as { model?: string; input?: string | string[] };
    const inputs = typeof body.input === 'string' ? [body.input] : (body.input ?? []);
    requests.push({ model: body.model ?? '', inputs, authorization: req.headers.authorization });
    if (failures > 0) {
      failures--;
      return send(500, { error: { message: 'scripted failure', type: 'server_error' } });
    }
    send(200, {
      object: 'list',
      data: inputs.map((text, index) => ({ object: 'embedding', index, embedding: fakeEmbedding(text) })),
      model: body.model,
      usage: { prompt_tokens: inputs.join(' ').split(/\s+/).length, total_tokens: inputs.join(' ').split(/\s+/).length },
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    failNext(n) {
      failures = n;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
