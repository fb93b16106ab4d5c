import { describe, expect, it } from 'vitest';
import { withoutCredentials } from '../../../src/core/wire/headers.ts';
import { CREDENTIAL_HEADERS, credentialMask, maskSecret, maskUrl } from '../../../src/core/wire/credentials.ts';

const KEY = 'sk-ant-api03-abcdefghijklmnop-WXYZ';

describe('credential masking (shared by the proxy and the emulator)', () => {
  it('masks every credential header, in any case, keeping the scheme word and the last four characters', () => {
    const mask = credentialMask(['X-Gateway-Secret']);
    const headers = Object.fromEntries([...CREDENTIAL_HEADERS, 'x-gateway-secret'].map((h) => [h.toUpperCase(), KEY]));
    const out = mask.headers({ ...headers, Authorization: `Bearer ${KEY}`, 'content-type': 'application/json' });
    for (const [name, value] of Object.entries(out)) {
      if (name === 'content-type') expect(value).toBe('application/json');
      else expect(value, name).not.toContain('abcdefghijklmnop');
    }
    expect(out['Authorization']).toBe('Bearer ****WXYZ');
    expect(out['X-API-KEY']).toBe('****WXYZ');
    expect(mask.headers({ 'set-cookie': [`a=${KEY}`, 'b=short'] })['set-cookie']).toEqual(['****WXYZ', '****']);
  });

  it('a short secret shows nothing of itself', () => {
    expect(maskSecret('hunter2')).toBe('****');
    expect(maskSecret('Basic dXNlcjpwYXNz')).toBe('Basic ****');
  });

  it('masks credential query parameters whatever their case or spelling; other parameters stay', () => {
    expect(maskUrl(`/v1/messages?beta=true&API_KEY=${KEY}&Key=${KEY}&x=1`)).toBe(
      '/v1/messages?beta=true&API_KEY=****WXYZ&Key=****WXYZ&x=1',
    );
    expect(maskUrl(`/m?api-key=${KEY}&access_token=${KEY}&sig=${KEY}&token=t`)).toBe(
      '/m?api-key=****WXYZ&access_token=****WXYZ&sig=****WXYZ&token=****',
    );
    // a percent-encoded name is compared decoded; a malformed escape does not throw
    expect(maskUrl(`/m?api%5Fkey=${KEY}&%E0%A4%A=1`)).toBe('/m?api%5Fkey=****WXYZ&%E0%A4%A=1');
    expect(maskUrl('/v1/messages')).toBe('/v1/messages');
  });

  it('masks the userinfo of an absolute URL and keys in its fragment', () => {
    expect(maskUrl(`https://user:${KEY}@gw.example/v1?key=${KEY}#access_token=${KEY}`)).toBe(
      'https://****@gw.example/v1?key=****WXYZ#access_token=****WXYZ',
    );
  });
});

describe('headers written to a manifest or a Redis job', () => {
  it('lose every credential header of the shared list, in any case; the rest stay', () => {
    const headers = Object.fromEntries(CREDENTIAL_HEADERS.map((h) => [h.toUpperCase(), KEY]));
    expect(withoutCredentials({ ...headers, 'x-forkcache-script': 'echo', 'anthropic-beta': 'x' })).toEqual({
      'x-forkcache-script': 'echo',
      'anthropic-beta': 'x',
    });
  });
});
