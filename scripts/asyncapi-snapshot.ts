/**
 * `npm run asyncapi:snapshot`: records the data schema of every public event type and version in
 * docs/asyncapi/schemas-v1.json. test/unit/asyncapi.test.ts fails when a type recorded there
 * changes in a way that breaks its consumers; run this only after adding a type or a compatible
 * change (a breaking change is a new type with the next version, and the old one stays recorded).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { publicDataSchemas } from '../api/asyncapi.js';

const file = fileURLToPath(new URL('../docs/asyncapi/schemas-v1.json', import.meta.url));
let previous: Record<string, unknown> = {};
try {
  previous = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
} catch {
  // first snapshot
}
// Types retired from the code stay recorded: their consumers still exist.
const next = { ...previous, ...publicDataSchemas() };
writeFileSync(file, `${JSON.stringify(next, null, 2)}\n`);
console.log(`${Object.keys(next).length} public event types recorded in ${file}`);
