import { randomInt } from 'node:crypto';
import { isLoopbackAddress } from '../http/client-address.js';
import { isPlainObject } from '../validate/check.js';
import { API_ACCEPT, isGatehouseNotFound, type Doctor } from './doctor-answers.js';
import { fixFor } from './doctor-proxy.js';
import { fail, ok, placeOf, shown, skip, type Outcome } from './doctor-report.js';

/** What Gatehouse's probe says of the address it settled on for a request. */
interface AddressSeen {
  readonly clientAddress: string;
  /** absent: no X-Forwarded-For came; ignored: it came from a peer not in --trust-proxy; used: it was read. */
  readonly forwardedFor: 'absent' | 'ignored' | 'used';
}

function addressSeenOf(json: unknown): AddressSeen | undefined {
  if (!isPlainObject(json) || json['probe'] !== 'gatehouse') return undefined;
  const { clientAddress, forwardedFor } = json;
  if (typeof clientAddress !== 'string') return undefined;
  if (forwardedFor !== 'absent' && forwardedFor !== 'ignored' && forwardedFor !== 'used') return undefined;
  return { clientAddress, forwardedFor };
}

const forwardedForFix = (doctor: Doctor): string => fixFor(doctor.proxy, {
  nginx: 'proxy_set_header X-Forwarded-For $remote_addr; in the locations that go to Gatehouse (gatehouse/to-gatehouse.conf has it)',
  Caddy: 'reverse_proxy sets X-Forwarded-For itself: remove any header_up X-Forwarded-For and trusted_proxies from the reverse_proxy to Gatehouse',
  Traefik: 'no forwardedHeaders.insecure, and forwardedHeaders.trustedIPs only for proxies in front of Traefik',
});

/**
 * client address: the address a sign-in counts against (the login throttle's), asked of the probe
 * beside the sign-in page, which goes the sign-in's way. Once as the doctor is, once with a made-up
 * X-Forwarded-For of two documentation addresses (RFC 5737): `claimed` first, `hop` nearest. Taking
 * `claimed` means Gatehouse trusts `hop`, an address on no one's network, as a proxy; taking `hop`
 * means the client's own header reached Gatehouse as the nearest hop.
 */
export async function clientAddressOutcome(loginPage: URL, doctor: Doctor): Promise<Outcome> {
  const probeUrl = new URL('api/auth/probe', loginPage);
  const claimed = `203.0.113.${randomInt(1, 255)}`;
  const hop = `198.51.100.${randomInt(1, 255)}`;
  const plain = await doctor.ask(probeUrl, { accept: API_ACCEPT });
  if (typeof plain === 'string') return fail(`${placeOf(probeUrl)}: ${plain}`);
  const seen = addressSeenOf(plain.json);
  if (isGatehouseNotFound(plain)) {
    return skip(`not checked: Gatehouse answers its own 404 at ${placeOf(probeUrl)}, where sign-ins go: the proxy's paths and its --base-uri disagree (see gate, api and cookie)`);
  }
  if (seen === undefined) {
    return skip(`not checked: ${placeOf(probeUrl)} answered ${plain.status}, not Gatehouse's probe with the client address (a Gatehouse older than this doctor, or api/auth/ not routed to it)`);
  }
  const forged = await doctor.ask(probeUrl, { accept: API_ACCEPT, 'x-forwarded-for': `${claimed}, ${hop}` });
  if (typeof forged === 'string') return fail(`${placeOf(probeUrl)}: ${forged}`);
  const believed = addressSeenOf(forged.json)?.clientAddress;
  const address = shown(seen.clientAddress, 64);
  const throttled = 'one stranger\'s wrong passwords lock everyone out (429)';
  const picks = 'so a client picks its own address and is never throttled';
  if (believed === claimed) {
    return fail(`Gatehouse believed a made-up X-Forwarded-For: it took ${claimed} for the client, so it trusts ${hop}, a documentation address, as a proxy: --trust-proxy covers addresses on the internet, ${picks}. Fix: list only your proxies' addresses in --trust-proxy (GATEHOUSE_TRUST_PROXY), never 0.0.0.0/0 or ::/0`);
  }
  if (believed === hop && seen.forwardedFor === 'absent') {
    return fail(`Gatehouse believed a made-up X-Forwarded-For (it took ${hop} for the client): the proxy adds no X-Forwarded-For of its own and passes the client's on, ${picks}. Fix: ${forwardedForFix(doctor)}`);
  }
  if (believed === hop && !isLoopbackAddress(seen.clientAddress)) {
    return fail(`Gatehouse believed a made-up X-Forwarded-For (it took ${hop} for the client): it trusts ${address}, the address this machine reaches it from, as a proxy, ${picks} from there. Fix: list only your proxies' addresses in --trust-proxy (GATEHOUSE_TRUST_PROXY)`);
  }
  if (seen.forwardedFor === 'ignored') {
    return fail(`Gatehouse does not trust the proxy: it takes every sign-in as coming from ${address}, the proxy's address, so ${throttled}. Fix: start Gatehouse with --trust-proxy ${address} (GATEHOUSE_TRUST_PROXY), the address the proxy connects from`);
  }
  if (seen.forwardedFor === 'absent') {
    return fail(`no X-Forwarded-For reaches Gatehouse with a sign-in, so it takes every sign-in as coming from ${address}, the proxy's address, and ${throttled}. Fix: ${forwardedForFix(doctor)}; and --trust-proxy ${address}`);
  }
  if (believed === hop) {
    return ok(`sign-ins from here count against ${address}, a loopback address Gatehouse trusts as a proxy (right when the proxy runs on this machine), so a made-up X-Forwarded-For from here is believed; ${hop} was not trusted, so one from elsewhere is not. Run the doctor from another machine to see a client's view`);
  }
  return ok(`sign-ins from here count against ${address} (from the proxy's X-Forwarded-For), and a made-up X-Forwarded-For is not believed`);
}
