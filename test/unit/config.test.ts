import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { buildConfig, printableConfig, SettingInvalid, SETTINGS, type Config } from '../../src/config.js';

/** buildConfig with GATEHOUSE_* values; everything else takes its fallback. */
function configFrom(values: Record<string, string> = {}): Config {
  return buildConfig((spec) => values[spec.env]);
}

const SECRET = 'a-very-secret-value-that-is-longer-than-32-characters';

describe('buildConfig', () => {
  it('uses the documented defaults', () => {
    const config = configFrom();
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.port, 3000);
    assert.equal(config.dataDir, resolve('./data'));
    assert.deepEqual(config.scryptCost, { N: 32768, r: 8, p: 3 });
    assert.equal(config.pollIntervalMs, 2000);
    assert.equal(config.maxBodyBytes, 65536);
    assert.equal(config.authMethod, 'default');
    assert.equal(config.baseUri, '');
    assert.equal(config.secret, undefined);
    assert.deepEqual(config.trustProxy, []);
    assert.equal(config.secureCookie, false);
    assert.equal(config.revokeOnLogout, false);
    assert.equal(config.tokenTtlSeconds, 7 * 24 * 60 * 60);
    assert.equal(config.minPasswordLength, undefined);
    assert.deepEqual(config.passwordMinimums, { gatehouse: 12, flood: 1 });
    assert.equal(config.headersTimeoutMs, 10_000);
    assert.equal(config.requestTimeoutMs, 30_000);
    assert.equal(config.shutdownTimeoutMs, 5_000);
    assert.deepEqual(config.throttle, { maxFailuresPerUsername: 10, maxFailuresPerAddress: 50, windowSeconds: 900, maxEntries: 10_000 });
    assert.equal(config.hashQueueLength, 256);
    assert.equal(config.maxRevokedTokens, 10_000);
  });

  it("makes --min-password-length the minimum of Gatehouse's own routes and of Flood's alike", () => {
    assert.deepEqual(configFrom({ GATEHOUSE_MIN_PASSWORD_LENGTH: '20' }).passwordMinimums, { gatehouse: 20, flood: 20 });
    assert.deepEqual(configFrom({ GATEHOUSE_MIN_PASSWORD_LENGTH: '8' }).passwordMinimums, { gatehouse: 8, flood: 8 });
    assert.deepEqual(configFrom({ GATEHOUSE_MIN_PASSWORD_LENGTH: '' }).passwordMinimums, { gatehouse: 12, flood: 1 });
  });

  it('reads a site name for the sign-in page, trimmed; none by default', () => {
    assert.equal(configFrom().siteName, undefined);
    assert.equal(configFrom({ GATEHOUSE_SITE_NAME: '  The Smiths ' }).siteName, 'The Smiths');
    assert.equal(configFrom({ GATEHOUSE_SITE_NAME: 'Ünïcødé 🏠 <b>' }).siteName, 'Ünïcødé 🏠 <b>');
  });

  it('resolves the data directory to an absolute path', () => {
    assert.equal(configFrom({ GATEHOUSE_DATA_DIR: 'some/dir' }).dataDir, resolve('some/dir'));
    assert.equal(configFrom({ GATEHOUSE_DATA_DIR: '/var/lib/gatehouse' }).dataDir, '/var/lib/gatehouse');
  });

  it('returns a frozen object', () => {
    assert.ok(Object.isFrozen(configFrom()));
  });

  it('reads the values it is given', () => {
    const config = configFrom({
      GATEHOUSE_HOST: '0.0.0.0',
      GATEHOUSE_PORT: '0',
      GATEHOUSE_SECRET: SECRET,
      GATEHOUSE_AUTH: 'none',
      GATEHOUSE_SCRYPT: '1024,8,1',
      GATEHOUSE_POLL_INTERVAL: '500',
      GATEHOUSE_MAX_BODY_BYTES: '1024',
      GATEHOUSE_TRUST_PROXY: '10.0.0.0/8, ::1',
      GATEHOUSE_SECURE_COOKIE: 'yes',
    });
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.port, 0);
    assert.equal(config.secret, SECRET);
    assert.equal(config.authMethod, 'none');
    assert.deepEqual(config.scryptCost, { N: 1024, r: 8, p: 1 });
    assert.equal(config.pollIntervalMs, 500);
    assert.equal(config.maxBodyBytes, 1024);
    assert.deepEqual(config.trustProxy, ['10.0.0.0/8', '::1']);
    assert.equal(config.secureCookie, true);
  });

  it('treats an empty secret as no secret (use the data directory file)', () => {
    assert.equal(configFrom({ GATEHOUSE_SECRET: '' }).secret, undefined);
  });

  const booleans: ReadonlyArray<[string, boolean]> = [
    ['1', true],
    ['true', true],
    ['TRUE', true],
    ['yes', true],
    ['on', true],
    ['0', false],
    ['false', false],
    ['no', false],
    ['off', false],
  ];
  for (const [text, expected] of booleans) {
    it(`reads the boolean ${JSON.stringify(text)} as ${String(expected)}`, () => {
      assert.equal(configFrom({ GATEHOUSE_SECURE_COOKIE: text }).secureCookie, expected);
    });
  }

  const baseUris: ReadonlyArray<[string, string]> = [
    ['/', ''],
    ['', ''],
    ['flood/', '/flood'],
    ['/flood', '/flood'],
    ['/flood/', '/flood'],
    ['//flood//', '/flood'],
    ['a/b', '/a/b'],
    ['/v1.2/api~x_y-z', '/v1.2/api~x_y-z'],
  ];
  for (const [input, expected] of baseUris) {
    it(`normalises the base URI ${JSON.stringify(input)} to ${JSON.stringify(expected)}`, () => {
      assert.equal(configFrom({ GATEHOUSE_BASE_URI: input }).baseUri, expected);
    });
  }

  const invalid: ReadonlyArray<{ name: string; values: Record<string, string> }> = [
    { name: 'a port above 65535', values: { GATEHOUSE_PORT: '65536' } },
    { name: 'a negative port', values: { GATEHOUSE_PORT: '-1' } },
    { name: 'a port that is not a number', values: { GATEHOUSE_PORT: 'http' } },
    { name: 'a fractional port', values: { GATEHOUSE_PORT: '3000.5' } },
    { name: 'a port with spaces', values: { GATEHOUSE_PORT: ' 3000' } },
    { name: 'an empty port', values: { GATEHOUSE_PORT: '' } },
    // Taken as a value, an empty host listened on every interface, and an empty data directory
    // was the working directory (chmod 0700 and swept for temp files).
    { name: 'an empty host', values: { GATEHOUSE_HOST: '' } },
    { name: 'a host of spaces', values: { GATEHOUSE_HOST: '  ' } },
    { name: 'an empty data directory', values: { GATEHOUSE_DATA_DIR: '' } },
    { name: 'a hexadecimal port', values: { GATEHOUSE_PORT: '0x50' } },
    { name: 'a scrypt N that is not a power of two', values: { GATEHOUSE_SCRYPT: '1000,8,1' } },
    { name: 'a scrypt cost with two fields', values: { GATEHOUSE_SCRYPT: '32768,8' } },
    { name: 'a scrypt cost with four fields', values: { GATEHOUSE_SCRYPT: '32768,8,3,1' } },
    { name: 'a scrypt cost that is not numbers', values: { GATEHOUSE_SCRYPT: 'high' } },
    { name: 'an empty scrypt cost', values: { GATEHOUSE_SCRYPT: '' } },
    { name: 'a scrypt r of 0', values: { GATEHOUSE_SCRYPT: '1024,0,1' } },
    { name: 'a scrypt p of 17', values: { GATEHOUSE_SCRYPT: '1024,8,17' } },
    { name: 'an unknown auth method', values: { GATEHOUSE_AUTH: 'basic' } },
    { name: 'an auth method in the wrong case', values: { GATEHOUSE_AUTH: 'Default' } },
    { name: 'an empty auth method', values: { GATEHOUSE_AUTH: '' } },
    { name: 'a base URI with a dot-dot segment', values: { GATEHOUSE_BASE_URI: '/../x' } },
    { name: 'a base URI that is only a dot-dot', values: { GATEHOUSE_BASE_URI: '..' } },
    { name: 'a base URI with a dot segment', values: { GATEHOUSE_BASE_URI: '/a/./b' } },
    { name: 'a base URI with an empty segment', values: { GATEHOUSE_BASE_URI: '/a//b' } },
    { name: 'a base URI with a query', values: { GATEHOUSE_BASE_URI: '/flood?x=1' } },
    { name: 'a base URI with a space', values: { GATEHOUSE_BASE_URI: '/my flood' } },
    { name: 'a base URI with a percent escape', values: { GATEHOUSE_BASE_URI: '/a%2Fb' } },
    { name: 'a base URI that is a full URL', values: { GATEHOUSE_BASE_URI: 'http://example.com/flood' } },
    { name: 'a trust-proxy entry that is a host name', values: { GATEHOUSE_TRUST_PROXY: 'proxy.local' } },
    { name: 'a trust-proxy CIDR with a bad prefix', values: { GATEHOUSE_TRUST_PROXY: '10.0.0.0/40' } },
    { name: 'one bad trust-proxy entry among good ones', values: { GATEHOUSE_TRUST_PROXY: '127.0.0.1,nope,::1' } },
    { name: 'a boolean that is not one', values: { GATEHOUSE_SECURE_COOKIE: 'maybe' } },
    { name: 'a poll interval below 100 ms', values: { GATEHOUSE_POLL_INTERVAL: '99' } },
    { name: 'a body limit below 1 KiB', values: { GATEHOUSE_MAX_BODY_BYTES: '1023' } },
    { name: 'a minimum password length of 0', values: { GATEHOUSE_MIN_PASSWORD_LENGTH: '0' } },
    { name: 'a site name of only spaces', values: { GATEHOUSE_SITE_NAME: '   ' } },
    { name: 'a site name of 65 characters', values: { GATEHOUSE_SITE_NAME: 'x'.repeat(65) } },
    { name: 'a site name with a line break', values: { GATEHOUSE_SITE_NAME: 'The\nSmiths' } },
    { name: 'a site name with an escape character', values: { GATEHOUSE_SITE_NAME: 'The \u001b[31mSmiths' } },
    { name: 'a hash concurrency of 0', values: { GATEHOUSE_HASH_CONCURRENCY: '0' } },
    { name: 'a throttle window of 0', values: { GATEHOUSE_THROTTLE_WINDOW: '0' } },
    { name: 'an unknown log level', values: { GATEHOUSE_LOG_LEVEL: 'verbose' } },
    { name: 'an unknown log format', values: { GATEHOUSE_LOG_FORMAT: 'xml' } },
    { name: 'a headers timeout below 500 ms', values: { GATEHOUSE_HEADERS_TIMEOUT: '499' } },
    { name: 'a request timeout that is not a number', values: { GATEHOUSE_REQUEST_TIMEOUT: '30s' } },
  ];
  for (const { name, values } of invalid) {
    it(`throws SettingInvalid for ${name}`, () => {
      assert.throws(() => configFrom(values), SettingInvalid);
    });
  }

  it('accepts port 0 and port 65535', () => {
    assert.equal(configFrom({ GATEHOUSE_PORT: '0' }).port, 0);
    assert.equal(configFrom({ GATEHOUSE_PORT: '65535' }).port, 65535);
  });

  it('has a setting for every documented flag and a GATEHOUSE_ variable for each', () => {
    for (const spec of SETTINGS) assert.match(spec.env, /^GATEHOUSE_[A-Z_]+$/);
    const secret = SETTINGS.find((spec) => spec.env === 'GATEHOUSE_SECRET');
    assert.equal(secret?.flag, '', 'the secret must never be a command-line flag');
  });
});

describe('printableConfig', () => {
  it('never contains the secret value', () => {
    const config = configFrom({ GATEHOUSE_SECRET: SECRET });
    const printed = printableConfig(config);
    assert.equal(JSON.stringify(printed).includes(SECRET), false);
    assert.notEqual(printed['secret'], SECRET);
    assert.equal(Object.values(printed).includes(SECRET), false);
  });

  it('never contains even part of the secret', () => {
    const printed = JSON.stringify(printableConfig(configFrom({ GATEHOUSE_SECRET: SECRET })));
    assert.equal(printed.includes(SECRET.slice(0, 12)), false);
    assert.equal(printed.includes(SECRET.slice(-12)), false);
  });

  it('keeps the other settings', () => {
    const config = configFrom({ GATEHOUSE_SECRET: SECRET, GATEHOUSE_PORT: '4000' });
    const printed = printableConfig(config);
    assert.equal(printed['port'], 4000);
    assert.equal(printed['dataDir'], config.dataDir);
  });

  it('says where the secret comes from when none is set', () => {
    const printed = printableConfig(configFrom());
    assert.equal(typeof printed['secret'], 'string');
  });
});

describe('the gate settings', () => {
  it('default to no extra redirect host and a host-only cookie', () => {
    const config = configFrom();
    assert.deepEqual(config.allowedRedirectHosts, []);
    assert.equal(config.cookieDomain, undefined);
  });

  const hosts: ReadonlyArray<[string, string[]]> = [
    ['app.example', ['app.example']],
    ['App.Example, FLOOD.example.org ,', ['app.example', 'flood.example.org']],
    ['localhost', ['localhost']],
    ['127.0.0.1,10.1.2.3', ['127.0.0.1', '10.1.2.3']],
    ['::1,[2001:db8::1]', ['[::1]', '[2001:db8::1]']],
    ['xn--bcher-kva.example', ['xn--bcher-kva.example']],
    ['a-b.c-d.example', ['a-b.c-d.example']],
  ];
  for (const [input, expected] of hosts) {
    it(`reads the allowed redirect hosts ${JSON.stringify(input)} as ${JSON.stringify(expected)}`, () => {
      assert.deepEqual(configFrom({ GATEHOUSE_ALLOWED_REDIRECT_HOSTS: input }).allowedRedirectHosts, expected);
    });
  }

  const badHosts = [
    'https://app.example',
    'app.example/',
    'app.example/login',
    'app.example:8443',
    '*.example',
    '.example',
    'app..example',
    '-app.example',
    'app-.example',
    'app example',
    'bücher.example',
    'a@b.example',
    `${'a'.repeat(64)}.example`,
    `${'abcdefghi.'.repeat(26)}example`,
    'app.example,evil example',
    '[::1',
    '[not-ip]',
  ];
  for (const input of badHosts) {
    it(`refuses the allowed redirect host ${JSON.stringify(input)}`, () => {
      assert.throws(() => configFrom({ GATEHOUSE_ALLOWED_REDIRECT_HOSTS: input }), SettingInvalid);
    });
  }

  it('reads a cookie domain, lower-cased', () => {
    assert.equal(configFrom({ GATEHOUSE_COOKIE_DOMAIN: 'Example.org' }).cookieDomain, 'example.org');
    assert.equal(configFrom({ GATEHOUSE_COOKIE_DOMAIN: 'home.example.org' }).cookieDomain, 'home.example.org');
  });

  it('treats an empty cookie domain as none', () => {
    assert.equal(configFrom({ GATEHOUSE_COOKIE_DOMAIN: '' }).cookieDomain, undefined);
  });

  for (const input of ['.example.org', 'example.org.', 'https://example.org', 'example.org/x', 'example.org:443', '127.0.0.1', '::1', 'a b', 'ex;ample.org', 'example.org; Secure', '*.example.org']) {
    it(`refuses the cookie domain ${JSON.stringify(input)}`, () => {
      assert.throws(() => configFrom({ GATEHOUSE_COOKIE_DOMAIN: input }), SettingInvalid);
    });
  }
});

describe('the public URL and passkey origins', () => {
  it('has neither by default', () => {
    assert.equal(configFrom().publicUrl, undefined);
    assert.deepEqual(configFrom().passkeyOrigins, []);
  });

  for (const [input, expected] of [
    ['https://auth.example.org', 'https://auth.example.org'],
    ['https://auth.example.org/', 'https://auth.example.org'],
    ['https://Example.org/auth/', 'https://example.org/auth'],
    ['https://example.org:8443/auth', 'https://example.org:8443/auth'],
    ['http://localhost:3000', 'http://localhost:3000'],
    ['http://127.0.0.1:3000/flood', 'http://127.0.0.1:3000/flood'],
  ] as const) {
    it(`reads the public URL ${input} as ${expected}`, () => {
      assert.equal(configFrom({ GATEHOUSE_PUBLIC_URL: input }).publicUrl, expected);
    });
  }

  for (const input of [
    'auth.example.org', 'http://auth.example.org', 'ftp://example.org', 'https://user:pw@example.org',
    'https://example.org/?a=1', 'https://example.org/#x', 'https://example.org?', 'javascript:alert(1)',
  ]) {
    it(`refuses the public URL ${JSON.stringify(input)}`, () => {
      assert.throws(() => configFrom({ GATEHOUSE_PUBLIC_URL: input }), SettingInvalid);
    });
  }

  it('reads passkey origins as URL.origin writes them', () => {
    const config = configFrom({ GATEHOUSE_PASSKEY_ORIGINS: 'https://a.example.org, https://b.example.org:8443/' });
    assert.deepEqual(config.passkeyOrigins, ['https://a.example.org', 'https://b.example.org:8443']);
  });

  for (const input of ['http://a.example.org', 'https://a.example.org/path', 'a.example.org', 'https://a.example.org:443x']) {
    it(`refuses the passkey origin ${JSON.stringify(input)}`, () => {
      assert.throws(() => configFrom({ GATEHOUSE_PASSKEY_ORIGINS: input }), SettingInvalid);
    });
  }
});

describe('the Flood origins (--flood-url)', () => {
  it('has none by default', () => assert.deepEqual(configFrom().floodUrls, []));

  it('reads a comma-separated list as URL.origin writes each: http or https, the default port dropped', () => {
    const config = configFrom({ GATEHOUSE_FLOOD_URL: 'https://Flood.example.org/, http://192.168.1.5:3000,http://[::1]:80' });
    assert.deepEqual(config.floodUrls, ['https://flood.example.org', 'http://192.168.1.5:3000', 'http://[::1]']);
  });

  for (const input of [
    'flood.example.org', 'ftp://flood.example.org', 'https://flood.example.org/flood', 'https://flood.example.org/.',
    'https://flood.example.org//', 'https://user@flood.example.org', 'https://flood.example.org/?a=1', 'https://flood.example.org?',
    'https://flood.example.org#x', 'https://flood.example.org:99999', 'https://*.example.org', 'https://flood.example.org.',
    'http:///flood.example.org', 'javascript:alert(1)',
  ]) {
    it(`refuses the Flood URL ${JSON.stringify(input)}`, () => {
      assert.throws(() => configFrom({ GATEHOUSE_FLOOD_URL: input }), SettingInvalid);
    });
  }

  it('refuses a public URL whose host no request could name', () => {
    assert.throws(() => configFrom({ GATEHOUSE_PUBLIC_URL: 'https://*.example.org' }), SettingInvalid);
  });
});

describe('fair hash queue settings', () => {
  it('default to 4 per client and 16 per network', () => {
    const config = configFrom();
    assert.equal(config.hashQueuePerClient, 4);
    assert.equal(config.hashQueuePerNetwork, 16);
  });

  it('take --hash-queue-per-client and --hash-queue-per-network up to 1,000,000 (the benchmark lifts them)', () => {
    const config = configFrom({ GATEHOUSE_HASH_QUEUE_PER_CLIENT: '1000000', GATEHOUSE_HASH_QUEUE_PER_NETWORK: '32' });
    assert.equal(config.hashQueuePerClient, 1_000_000);
    assert.equal(config.hashQueuePerNetwork, 32);
  });

  for (const [name, value] of [['GATEHOUSE_HASH_QUEUE_PER_CLIENT', '0'], ['GATEHOUSE_HASH_QUEUE_PER_NETWORK', '-1'], ['GATEHOUSE_HASH_QUEUE_PER_CLIENT', '1000001'], ['GATEHOUSE_HASH_QUEUE_PER_NETWORK', 'many']] as const) {
    it(`refuses ${name}=${value}`, () => assert.throws(() => configFrom({ [name]: value }), SettingInvalid));
  }
});
