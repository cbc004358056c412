import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkClientSettings, CLIENT_KINDS } from '../../src/validate/client-settings.js';

const VALID: Readonly<Record<string, Readonly<Record<string, unknown>>>> = {
  'rTorrent socket': { client: 'rTorrent', type: 'socket', version: 1, socket: '/run/rtorrent.sock' },
  'rTorrent tcp': { client: 'rTorrent', type: 'tcp', version: 1, host: 'localhost', port: 5000 },
  'qBittorrent web': { client: 'qBittorrent', type: 'web', version: 1, url: 'http://localhost:8080', username: 'admin', password: 'adminadmin' },
  'Transmission rpc': { client: 'Transmission', type: 'rpc', version: 1, url: 'https://nas.local:9091/transmission/rpc', username: 'u', password: 'p' },
  'Deluge rpc': { client: 'Deluge', type: 'rpc', version: 1, host: '10.0.0.2', port: 58846, username: 'localclient', password: 'x' },
};

function valid(name: string): Record<string, unknown> {
  const settings = VALID[name];
  assert.ok(settings !== undefined, name);
  return { ...settings };
}

function firstProblemPath(input: unknown): string | undefined {
  const result = checkClientSettings(input, 'client');
  assert.equal(result.ok, false, `expected a refusal of ${JSON.stringify(input)}`);
  return result.ok ? undefined : result.problems[0]?.path;
}

describe('checkClientSettings', () => {
  it('knows exactly the four clients of the interface', () => {
    assert.deepEqual([...CLIENT_KINDS].sort(), ['Deluge', 'Transmission', 'qBittorrent', 'rTorrent']);
  });

  for (const name of Object.keys(VALID)) {
    it(`accepts a complete ${name} shape and returns it unchanged`, () => {
      const input = valid(name);
      const result = checkClientSettings(input, 'client');
      assert.ok(result.ok, result.ok ? '' : JSON.stringify(result.problems));
      if (result.ok) assert.deepEqual(result.value, input);
    });
  }

  const accepted: ReadonlyArray<{ name: string; input: Record<string, unknown> }> = [
    { name: 'empty credentials for qBittorrent', input: { ...valid('qBittorrent web'), username: '', password: '' } },
    { name: 'empty credentials for Deluge', input: { ...valid('Deluge rpc'), username: '', password: '' } },
    { name: 'port 1', input: { ...valid('rTorrent tcp'), port: 1 } },
    { name: 'port 65535', input: { ...valid('rTorrent tcp'), port: 65535 } },
    { name: 'an https URL with a path and query', input: { ...valid('qBittorrent web'), url: 'https://example.com/qb/?x=1' } },
    { name: 'an http URL with credentials in it', input: { ...valid('Transmission rpc'), url: 'http://user:pw@host:9091/' } },
    { name: 'an upper-case URL scheme', input: { ...valid('qBittorrent web'), url: 'HTTP://localhost:8080' } },
  ];
  for (const { name, input } of accepted) {
    it(`accepts ${name}`, () => {
      const result = checkClientSettings(input, 'client');
      assert.ok(result.ok, result.ok ? '' : JSON.stringify(result.problems));
      if (result.ok) assert.deepEqual(result.value, input);
    });
  }

  const without = (name: string, key: string): Record<string, unknown> => {
    const input = valid(name);
    delete input[key];
    return input;
  };

  const refused: ReadonlyArray<{ name: string; input: unknown; path: string }> = [
    { name: 'null', input: null, path: 'client' },
    { name: 'an array', input: [valid('rTorrent socket')], path: 'client' },
    { name: 'a string', input: 'rTorrent', path: 'client' },
    { name: 'an unknown client', input: { ...valid('rTorrent socket'), client: 'uTorrent' }, path: 'client.client' },
    { name: 'a client name in the wrong case', input: { ...valid('rTorrent socket'), client: 'rtorrent' }, path: 'client.client' },
    { name: 'a client named after an Object.prototype member', input: { ...valid('rTorrent socket'), client: 'toString' }, path: 'client.client' },
    { name: 'a client named __proto__', input: { ...valid('rTorrent socket'), client: '__proto__' }, path: 'client.client' },
    { name: 'a missing client', input: without('rTorrent socket', 'client'), path: 'client.client' },
    { name: 'a numeric client', input: { ...valid('rTorrent socket'), client: 1 }, path: 'client.client' },
    { name: 'a type that belongs to another client', input: { ...valid('qBittorrent web'), type: 'rpc' }, path: 'client.type' },
    { name: 'an unknown type', input: { ...valid('rTorrent socket'), type: 'unix' }, path: 'client.type' },
    { name: 'a type named constructor', input: { ...valid('rTorrent socket'), type: 'constructor' }, path: 'client.type' },
    { name: 'a missing type', input: without('rTorrent socket', 'type'), path: 'client.type' },
    { name: 'a missing version', input: without('rTorrent socket', 'version'), path: 'client.version' },
    { name: 'version 2', input: { ...valid('rTorrent socket'), version: 2 }, path: 'client.version' },
    { name: 'version as the string "1"', input: { ...valid('rTorrent socket'), version: '1' }, path: 'client.version' },
    { name: 'an unknown key inside client', input: { ...valid('rTorrent socket'), extra: true }, path: 'client.extra' },
    { name: 'a field of another type of the same client', input: { ...valid('rTorrent socket'), host: 'h' }, path: 'client.host' },
    { name: 'a __proto__ key inside client', input: JSON.parse('{"client":"rTorrent","type":"socket","version":1,"socket":"/s","__proto__":{}}'), path: 'client.__proto__' },
    { name: 'a missing socket', input: without('rTorrent socket', 'socket'), path: 'client.socket' },
    { name: 'an empty socket', input: { ...valid('rTorrent socket'), socket: '' }, path: 'client.socket' },
    { name: 'a numeric socket', input: { ...valid('rTorrent socket'), socket: 5 }, path: 'client.socket' },
    { name: 'a missing host', input: without('rTorrent tcp', 'host'), path: 'client.host' },
    { name: 'an empty host', input: { ...valid('rTorrent tcp'), host: '' }, path: 'client.host' },
    { name: 'a missing port', input: without('rTorrent tcp', 'port'), path: 'client.port' },
    { name: 'port 0', input: { ...valid('rTorrent tcp'), port: 0 }, path: 'client.port' },
    { name: 'port 65536', input: { ...valid('rTorrent tcp'), port: 65536 }, path: 'client.port' },
    { name: 'a fractional port', input: { ...valid('rTorrent tcp'), port: 80.5 }, path: 'client.port' },
    { name: 'a port given as a string', input: { ...valid('rTorrent tcp'), port: '5000' }, path: 'client.port' },
    { name: 'an ftp URL', input: { ...valid('qBittorrent web'), url: 'ftp://localhost/' }, path: 'client.url' },
    { name: 'a javascript: URL', input: { ...valid('qBittorrent web'), url: 'javascript:alert(1)' }, path: 'client.url' },
    { name: 'a file URL', input: { ...valid('Transmission rpc'), url: 'file:///etc/passwd' }, path: 'client.url' },
    { name: 'a relative URL', input: { ...valid('Transmission rpc'), url: '/transmission/rpc' }, path: 'client.url' },
    { name: 'text that is not a URL', input: { ...valid('qBittorrent web'), url: 'not a url' }, path: 'client.url' },
    { name: 'an empty URL', input: { ...valid('qBittorrent web'), url: '' }, path: 'client.url' },
    { name: 'a missing URL', input: without('qBittorrent web', 'url'), path: 'client.url' },
    { name: 'a missing username', input: without('qBittorrent web', 'username'), path: 'client.username' },
    { name: 'a missing password', input: without('Transmission rpc', 'password'), path: 'client.password' },
    { name: 'a null password', input: { ...valid('Deluge rpc'), password: null }, path: 'client.password' },
    { name: 'a numeric username', input: { ...valid('Deluge rpc'), username: 1 }, path: 'client.username' },
    { name: 'a Deluge shape without host', input: without('Deluge rpc', 'host'), path: 'client.host' },
    { name: 'a Deluge shape with an out-of-range port', input: { ...valid('Deluge rpc'), port: 70000 }, path: 'client.port' },
    { name: 'a Deluge shape with a url instead of host and port', input: { client: 'Deluge', type: 'rpc', version: 1, url: 'http://x', username: '', password: '' }, path: 'client.url' },
  ];
  for (const { name, input, path } of refused) {
    it(`refuses ${name} (problem at ${path})`, () => {
      assert.equal(firstProblemPath(input), path);
    });
  }

  it('returns an object that holds only the shape\'s keys', () => {
    const result = checkClientSettings(valid('Deluge rpc'), 'client');
    assert.ok(result.ok);
    if (result.ok) assert.deepEqual(Object.keys(result.value).sort(), ['client', 'host', 'password', 'port', 'type', 'username', 'version']);
  });

  it('returns a copy, not the input object', () => {
    const input = valid('rTorrent socket');
    const result = checkClientSettings(input, 'client');
    assert.ok(result.ok);
    if (result.ok) assert.notEqual(result.value, input);
  });
});
