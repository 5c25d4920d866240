import { describe, expect, it } from 'vitest';
import { render } from 'svelte/server';
import KeyToolSetSwitch from './KeyToolSetSwitch.svelte';
import type { ApiKey } from '../lib/apikeys';

const key = (tool_set: ApiKey['tool_set']): ApiKey => ({
  id: 'key_1',
  name: 'Cursor',
  prefix: 'rrk_ab12cd',
  created_at: '2026-12-01T10:00:00Z',
  last_used_at: null,
  revoked_at: null,
  tool_set,
});

describe('KeyToolSetSwitch', () => {
  it('is off for a key with all the tools, and says what it is for', () => {
    const { body } = render(KeyToolSetSwitch, { props: { apiKey: key('full'), onChange: async () => {} } });
    expect(body).toContain('aria-label="Compact tool set for Cursor"');
    expect(body).not.toMatch(/checked/);
    expect(body).toContain('All 45 tools');
  });
  it('is on for a compact key', () => {
    const { body } = render(KeyToolSetSwitch, { props: { apiKey: key('compact'), onChange: async () => {} } });
    expect(body).toMatch(/checked/);
    expect(body).toContain('28 core tools');
  });
});
