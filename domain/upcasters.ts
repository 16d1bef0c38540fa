import { flowSecretUpcasters } from './flows/upcasters.js';
import type { Upcaster } from './shared/upcasting.js';

/** Every context's upcasters that need nothing but the event. */
export const allUpcasters: Upcaster[] = [];

/**
 * All upcasters, including those that need the sealing key: flow events written with node secrets
 * in clear are read with those secrets sealed (domain/flows/upcasters.ts).
 */
export function allUpcastersWith(keys: { sealBox(plaintext: string): string }): Upcaster[] {
  return [...allUpcasters, ...flowSecretUpcasters((plaintext) => keys.sealBox(plaintext))];
}
