// The containers suite on Debian's Docker (docker.io: dockerd started here with a data root of
// its own, docker-daemon.ts) with Debian's docker-compose: the Dockerfile's image on its own, then
// deploy/compose.yml. Needs root, docker.io and docker-compose; it fails (never skips) without
// them: CI installs them. What cannot run here is listed as skipped, with the reason.
import { after, before, describe, it } from 'node:test';
import { assertBuilt, removeTempDirs } from '../../helpers/process.js';
import { describeCompose } from './compose-cases.js';
import { startEngine, type Engine } from './engines.js';
import { describeImage } from './image-cases.js';

const PROJECT = `gatehouse-docker-test-${process.pid}`;
const STAND_IN = `localhost/${PROJECT}-standin`;
let running: Engine | undefined;
const engine = (): Engine => {
  if (running === undefined) throw new Error('Docker was not set up (see the first failure)');
  return running;
};

describe('Docker', () => {
  before(async () => {
    assertBuilt();
    running = await startEngine('docker');
    console.log(`containers suite run on: ${running.description}`);
    await running.buildStandIns(STAND_IN);
  });
  // The images stay until the end: the image cases' layers are the compose build's cache.
  const built = [
    describeImage('Docker', engine, STAND_IN, PROJECT),
    describeCompose('docker-compose on Docker', engine, STAND_IN, PROJECT),
  ];
  after(async () => {
    running?.removeImages([...built, `${STAND_IN}-node`, `${STAND_IN}-caddy`, `${STAND_IN}-whoami`]);
    await running?.stop();
    await removeTempDirs();
  });

  // Said here and in docs/docker.md and docs/compose.md, so that no one reads a pass as covering them.
  it('NOT RUN here: `docker compose` (Compose v2)', { skip: 'NOT RUN: Debian 12 packages Compose only as docker-compose 1.29 (run above); the v2 plugin (docker-compose-plugin) is Docker\'s own package' });
  it('NOT RUN here: the real base images', { skip: 'NOT RUN: this machine cannot pull node:20-alpine, caddy:2-alpine or traefik/whoami; local stand-ins built from its own node 20 and Caddy 2.6 take their place' });
  it('NOT RUN here: Docker\'s default networking', { skip: 'NOT RUN: dockerd runs here with --iptables=false --bridge=none (it must not change the shared host\'s firewall): published ports go through docker-proxy, not iptables, and containers cannot reach out (builds use the host network)' });
});
