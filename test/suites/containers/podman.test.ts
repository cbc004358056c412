// The containers suite on podman (rootful) with podman-compose: the Dockerfile's image on its own,
// then deploy/compose.yml. Needs root, podman and podman-compose; it fails (never skips) without
// them: CI installs them.
import { after, before, describe } from 'node:test';
import { assertBuilt, removeTempDirs } from '../../helpers/process.js';
import { describeCompose } from './compose-cases.js';
import { startEngine, type Engine } from './engines.js';
import { describeImage } from './image-cases.js';

const PROJECT = `gatehouse-podman-test-${process.pid}`;
const STAND_IN = `localhost/${PROJECT}-standin`;
let running: Engine | undefined;
const engine = (): Engine => {
  if (running === undefined) throw new Error('podman was not set up (see the first failure)');
  return running;
};

describe('podman', () => {
  before(async () => {
    assertBuilt();
    running = await startEngine('podman');
    console.log(`containers suite run on: ${running.description}`);
    await running.buildStandIns(STAND_IN);
  });
  // The images stay until the end: the image cases' layers are the compose build's cache.
  const built = [
    describeImage('podman', engine, STAND_IN, PROJECT),
    describeCompose('podman-compose', engine, STAND_IN, PROJECT),
  ];
  after(async () => {
    running?.removeImages([...built, `${STAND_IN}-node`, `${STAND_IN}-caddy`, `${STAND_IN}-whoami`]);
    await running?.stop();
    await removeTempDirs();
  });
});
