import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { classifyAddress } from '../http/address-policy.js';
import type { AddressResolver } from '../../ports/address-resolver.js';

/** The AddressResolver port over the system resolver; every answer is classified (address-policy.ts). */
export const systemAddressResolver: AddressResolver = {
  async resolve(host) {
    const addresses = isIP(host) ? [host] : (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
    return addresses.map((address) => ({ address, addressClass: classifyAddress(address) }));
  },
};
