import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  catchUpHours,
  catchUpLabel,
  curlExample,
  filterZones,
  DEFAULT_PRESET,
  deliveryTone,
  durationSeconds,
  fireTime,
  formatSize,
  GRACE_OPTIONS,
  methodList,
  parseCron,
  payloadError,
  presetCron,
  presetTime,
  readTime,
  shellQuote,
  timeZones,
  until,
  utcToZoned,
  zoneCity,
  zonedTime,
  zonedToUtc,
  type CronPreset,
} from './automations';
import { AutomationsState } from './automations.svelte';

const preset = (p: Partial<CronPreset>): CronPreset => ({ ...DEFAULT_PRESET, ...p });

describe('cron presets', () => {
  it('builds the expression of each preset', () => {
    expect(presetCron(preset({ repeat: 'hourly', minute: 15 }))).toBe('15 * * * *');
    expect(presetCron(preset({ repeat: 'daily', hour: 9, minute: 0 }))).toBe('0 9 * * *');
    expect(presetCron(preset({ repeat: 'weekdays', hour: 8, minute: 30 }))).toBe('30 8 * * 1-5');
    expect(presetCron(preset({ repeat: 'weekly', hour: 17, minute: 5, weekday: 5 }))).toBe('5 17 * * 5');
    expect(presetCron(preset({ repeat: 'monthly', hour: 6, minute: 0, monthday: 15 }))).toBe('0 6 15 * *');
    expect(presetCron(preset({ repeat: 'custom' }))).toBe('');
  });

  it('reads every preset back from its expression', () => {
    const all: CronPreset[] = [
      preset({ repeat: 'hourly', minute: 45 }),
      preset({ repeat: 'daily', hour: 23, minute: 59 }),
      preset({ repeat: 'weekdays', hour: 9, minute: 0 }),
      preset({ repeat: 'weekly', hour: 10, minute: 30, weekday: 0 }),
      preset({ repeat: 'monthly', hour: 7, minute: 15, monthday: 28 }),
    ];
    for (const p of all) expect(parseCron(presetCron(p))).toEqual(p);
  });

  it('understands descriptors, names, extra spaces and Sunday as 7', () => {
    expect(parseCron('@daily')).toMatchObject({ repeat: 'daily', hour: 0, minute: 0 });
    expect(parseCron('@midnight')).toMatchObject({ repeat: 'daily', hour: 0, minute: 0 });
    expect(parseCron('@hourly')).toMatchObject({ repeat: 'hourly', minute: 0 });
    expect(parseCron('@weekly')).toMatchObject({ repeat: 'weekly', weekday: 0, hour: 0 });
    expect(parseCron('@monthly')).toMatchObject({ repeat: 'monthly', monthday: 1, hour: 0 });
    expect(parseCron('  0   9 * *   MON-FRI ')).toMatchObject({ repeat: 'weekdays', hour: 9 });
    expect(parseCron('0 9 * * tue')).toMatchObject({ repeat: 'weekly', weekday: 2 });
    expect(parseCron('0 9 * * 7')).toMatchObject({ repeat: 'weekly', weekday: 0 });
  });

  it('calls anything else custom and keeps the fallback values', () => {
    const fallback = preset({ hour: 14, minute: 20 });
    for (const e of ['*/15 * * * *', '0 9 * * 1,3', '0 9-17 * * *', '0 9 31 * *', '0 9 1 1 *', '0 9 1 * 1', '@yearly', '', 'nonsense', '0 9 * *', '60 9 * * *', '0 24 * * *']) {
      expect(parseCron(e, fallback), e).toEqual({ ...fallback, repeat: 'custom' });
    }
  });

  it('reads and writes the time field', () => {
    expect(presetTime({ hour: 9, minute: 5 })).toBe('09:05');
    expect(readTime('09:05')).toEqual({ hour: 9, minute: 5 });
    expect(readTime('23:59:00')).toEqual({ hour: 23, minute: 59 });
    expect(readTime('24:00')).toBeUndefined();
    expect(readTime('')).toBeUndefined();
  });
});

describe('times in a zone and locally', () => {
  // 2025-03-03 08:00 UTC: 09:00 in Berlin, 03:00 in New York.
  const iso = '2025-03-03T08:00:00Z';

  it('formats a moment on a clock in a zone', () => {
    expect(zonedTime(iso, 'Europe/Berlin', 'en-GB')).toBe('Mon 3 Mar, 09:00');
    expect(zonedTime(iso, 'America/New_York', 'en-GB')).toBe('Mon 3 Mar, 03:00');
    expect(zonedTime('not a time', 'UTC', 'en-GB')).toBe('');
  });

  it('adds the local time only when it reads differently', () => {
    expect(fireTime(iso, 'Europe/Berlin', 'America/New_York', 'en-GB')).toEqual({
      zoned: 'Mon 3 Mar, 09:00',
      city: 'Berlin',
      local: 'Mon 3 Mar, 03:00',
    });
    // Paris keeps Berlin's clock: nothing to add.
    expect(fireTime(iso, 'Europe/Berlin', 'Europe/Paris', 'en-GB').local).toBeNull();
    expect(fireTime(iso, 'UTC', 'UTC', 'en-GB')).toEqual({ zoned: 'Mon 3 Mar, 08:00', city: 'UTC', local: null });
  });

  it('names zones by their city', () => {
    expect(zoneCity('America/New_York')).toBe('New York');
    expect(zoneCity('America/Argentina/Buenos_Aires')).toBe('Buenos Aires');
    expect(zoneCity('UTC')).toBe('UTC');
  });

  it('converts a wall time in a zone to UTC and back, across DST', () => {
    expect(zonedToUtc('2025-03-03T09:00', 'Europe/Berlin')).toBe('2025-03-03T08:00:00Z'); // CET
    expect(zonedToUtc('2025-07-01T09:00', 'Europe/Berlin')).toBe('2025-07-01T07:00:00Z'); // CEST
    expect(zonedToUtc('2025-07-01T09:00', 'America/New_York')).toBe('2025-07-01T13:00:00Z'); // EDT
    expect(zonedToUtc('2025-01-01T09:00', 'America/New_York')).toBe('2025-01-01T14:00:00Z'); // EST
    expect(zonedToUtc('2025-01-01T09:00', 'Asia/Kolkata')).toBe('2025-01-01T03:30:00Z');
    expect(zonedToUtc('2025-01-01T09:00:30', 'UTC')).toBe('2025-01-01T09:00:30Z');
    // The night the clocks jump forward, 02:30 does not exist: it becomes 03:30.
    expect(zonedToUtc('2025-03-30T02:30', 'Europe/Berlin')).toBe('2025-03-30T01:30:00Z');
    expect(utcToZoned('2025-03-30T01:30:00Z', 'Europe/Berlin')).toBe('2025-03-30T03:30');
    // Right before and after the jump.
    expect(zonedToUtc('2025-03-30T01:59', 'Europe/Berlin')).toBe('2025-03-30T00:59:00Z');
    expect(zonedToUtc('2025-03-30T03:00', 'Europe/Berlin')).toBe('2025-03-30T01:00:00Z');
    for (const [local, tz] of [
      ['2025-11-02T12:00', 'America/New_York'],
      ['2025-10-26T12:00', 'Europe/Berlin'],
      ['2024-02-29T23:45', 'Pacific/Auckland'],
    ] as const) {
      expect(utcToZoned(zonedToUtc(local, tz), tz)).toBe(local);
    }
  });

  it('refuses what it cannot read', () => {
    expect(zonedToUtc('', 'UTC')).toBe('');
    expect(zonedToUtc('2025-01-01 09:00', 'UTC')).toBe('');
    expect(zonedToUtc('2025-01-01T09:00', 'Not/AZone')).toBe('');
    expect(utcToZoned('nope', 'UTC')).toBe('');
  });

  it('lists zones with UTC and the schedule’s own', () => {
    const zones = timeZones(['Etc/GMT+5']);
    expect(zones).toContain('UTC');
    expect(zones).toContain('Europe/Berlin');
    expect(zones).toContain('Etc/GMT+5');
    expect(new Set(zones).size).toBe(zones.length);
  });

  it('says how long until a time', () => {
    const now = Date.parse('2025-03-03T08:00:00Z');
    expect(until('2025-03-03T08:04:00Z', now)).toBe('in 4 min');
    expect(until('2025-03-03T08:00:10Z', now)).toBe('now');
    expect(until('2025-03-03T11:00:00Z', now)).toBe('in 3 h');
    expect(until('2025-03-06T08:00:00Z', now)).toBe('in 3 days');
    expect(until('2025-03-02T08:00:00Z', now)).toBe('');
    expect(until(null, now)).toBe('');
  });
});

describe('catch-up', () => {
  it('reads Go durations and seconds', () => {
    expect(durationSeconds('24h0m0s')).toBe(86400);
    expect(durationSeconds('1h30m')).toBe(5400);
    expect(durationSeconds('90m')).toBe(5400);
    expect(durationSeconds('1.5h')).toBe(5400);
    expect(durationSeconds('250ms')).toBeCloseTo(0.25);
    expect(durationSeconds('0s')).toBe(0);
    expect(durationSeconds('3600')).toBe(3600);
    expect(durationSeconds(7200)).toBe(7200);
    expect(durationSeconds('a day')).toBeNaN();
    expect(durationSeconds('')).toBeNaN();
  });

  it('turns them into whole hours and words', () => {
    expect(catchUpHours('24h0m0s')).toBe(24);
    expect(catchUpHours('6h0m0s')).toBe(6);
    expect(catchUpHours('10m0s')).toBe(1);
    expect(catchUpHours('garbage')).toBe(24);
    expect(catchUpLabel('once', '12h0m0s')).toBe('Runs once if missed within 12 h');
    expect(catchUpLabel('skip', '12h0m0s')).toBe('Skips missed times');
  });
});

describe('triggers', () => {
  it('offers rotation now, after an hour or a day', () => {
    expect(GRACE_OPTIONS.map((g) => g.seconds)).toEqual([0, 3600, 86400]);
  });

  it('checks a JSON test payload', () => {
    expect(payloadError('{"a":1}', 'application/json')).toBe('');
    expect(payloadError('', 'application/json')).toBe('');
    expect(payloadError('{"a":', 'application/json')).toMatch(/^Not valid JSON/);
    expect(payloadError('{"a":', 'text/plain')).toBe('');
  });

  it('quotes for a shell', () => {
    expect(shellQuote('http://127.0.0.1:7777/hooks/rrh_abc')).toBe('http://127.0.0.1:7777/hooks/rrh_abc');
    expect(shellQuote('{"a": 1}')).toBe(`'{"a": 1}'`);
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
  });

  it('builds the curl example', () => {
    expect(curlExample('http://127.0.0.1:7777/hooks/rrh_x')).toBe(
      `curl -X POST http://127.0.0.1:7777/hooks/rrh_x \\\n  -H 'Content-Type: application/json' \\\n  -d '{"hello":"world"}'`,
    );
    expect(curlExample('http://h/hooks/t', 'get')).toBe('curl -X GET http://h/hooks/t');
    expect(curlExample('http://h/hooks/t', 'PUT', 'text/plain', "it's")).toBe(
      `curl -X PUT http://h/hooks/t \\\n  -H 'Content-Type: text/plain' \\\n  -d 'it'\\''s'`,
    );
  });

  it('lists methods in a stable order', () => {
    expect(methodList(['GET', 'POST'])).toBe('POST, GET');
    expect(methodList([])).toBe('POST');
  });

  it('sizes and tones deliveries', () => {
    expect(formatSize(0)).toBe('0 B');
    expect(formatSize(512)).toBe('512 B');
    expect(formatSize(1536)).toBe('1.5 KB');
    expect(formatSize(2 * 1024 * 1024)).toBe('2.0 MB');
    expect(deliveryTone({ status: 202 })).toBe('ok');
    expect(deliveryTone({ status: 200 })).toBe('ok');
    expect(deliveryTone({ status: 429 })).toBe('bad');
  });
});

describe('AutomationsState', () => {
  const schedule = (id: string, enabled = true) => ({ id, enabled, next_fire_at: enabled ? '2025-03-03T08:00:00Z' : null });
  let calls: string[];
  let routes: Record<string, unknown>;

  beforeEach(() => {
    calls = [];
    routes = {
      'GET /api/workspaces/ws_1/agents/ag_1/schedules': [schedule('sc_1'), schedule('sc_2', false)],
      'GET /api/workspaces/ws_1/agents/ag_1/triggers': [{ id: 'tr_1' }],
      'GET /api/workspaces/ws_1/schedules/sc_1/next?n=5': ['2025-03-03T08:00:00Z', '2025-03-04T08:00:00Z'],
      'GET /api/workspaces/ws_1/schedules/sc_1/history?limit=50': [{ id: 'fi_1', outcome: 'manual', run_id: 'rn_1' }],
      'POST /api/workspaces/ws_1/schedules/sc_1/run': { id: 'fi_1', outcome: 'manual', run_id: 'rn_1' },
      'GET /api/workspaces/ws_1/triggers/tr_1/deliveries?limit=50': [{ id: 'dl_1', status: 202 }],
      'POST /api/workspaces/ws_1/agents/ag_1/triggers': { trigger: { id: 'tr_2' }, url: 'http://h/hooks/rrh_one' },
      'POST /api/workspaces/ws_1/triggers/tr_2/rotate': { trigger: { id: 'tr_2' }, url: 'http://h/hooks/rrh_two' },
      'DELETE /api/workspaces/ws_1/triggers/tr_2': null,
    };
    vi.stubGlobal('fetch', async (url: string, init: RequestInit) => {
      const key = `${init.method ?? 'GET'} ${url}`;
      calls.push(key);
      if (!(key in routes)) return new Response(JSON.stringify({ error: `no route ${key}` }), { status: 404 });
      const body = routes[key];
      return body === null ? new Response(null, { status: 204 }) : new Response(JSON.stringify(body), { status: 200 });
    });
  });
  afterEach(() => vi.unstubAllGlobals());

  const settle = () => new Promise((r) => setTimeout(r, 0));

  it('loads schedules, triggers and the next times of enabled schedules', async () => {
    const s = new AutomationsState('ws_1', 'ag_1');
    await s.load();
    expect(s.schedules.map((x) => x.id)).toEqual(['sc_1', 'sc_2']);
    expect(s.triggers.map((x) => x.id)).toEqual(['tr_1']);
    expect(s.next).toEqual({ sc_1: ['2025-03-03T08:00:00Z', '2025-03-04T08:00:00Z'], sc_2: [] });
    expect(calls.filter((c) => c.includes('/next'))).toEqual(['GET /api/workspaces/ws_1/schedules/sc_1/next?n=5']);
    expect(s.loaded).toBe(true);
    expect(s.error).toBe('');
  });

  it('keeps a failure to show', async () => {
    delete routes['GET /api/workspaces/ws_1/agents/ag_1/triggers'];
    const s = new AutomationsState('ws_1', 'ag_1');
    await s.load();
    expect(s.error).toMatch(/no route/);
    expect(s.loaded).toBe(true);
  });

  it('follows events of its own agent only; a delivery refreshes just the open deliveries', async () => {
    const s = new AutomationsState('ws_1', 'ag_1');
    await s.load();
    await s.loadDeliveries('tr_1');
    calls = [];
    s.onEvent({ workspace: 'ws_1', kind: 'schedule.updated', id: 'sc_9', agent: 'ag_other' });
    s.onEvent({ workspace: 'ws_other', kind: 'schedule.updated', id: 'sc_1', agent: 'ag_1' });
    await settle();
    expect(calls).toEqual([]);
    s.onEvent({ workspace: 'ws_1', kind: 'trigger.delivery', id: 'tr_1', agent: 'ag_1' });
    await settle();
    expect(calls).toEqual(['GET /api/workspaces/ws_1/triggers/tr_1/deliveries?limit=50']);
    calls = [];
    s.onEvent({ workspace: 'ws_1', kind: 'schedule.fired', id: 'sc_1', agent: 'ag_1' });
    await settle();
    await settle();
    expect(calls).toContain('GET /api/workspaces/ws_1/agents/ag_1/schedules');
    expect(calls.some((c) => c.includes('/history'))).toBe(false);
  });

  it('opens the history after Run now and refreshes it on the next fire', async () => {
    const s = new AutomationsState('ws_1', 'ag_1');
    await s.load();
    const fire = await s.runNow(s.schedules[0]!);
    expect(fire.run_id).toBe('rn_1');
    expect(s.history.sc_1?.[0]?.outcome).toBe('manual');
    calls = [];
    s.onEvent({ workspace: 'ws_1', kind: 'schedule.fired', id: 'sc_1', agent: 'ag_1' });
    await settle();
    expect(calls).toContain('GET /api/workspaces/ws_1/schedules/sc_1/history?limit=50');
    s.closeHistory('sc_1');
    expect(s.history).toEqual({});
  });

  it('drops an open history when its schedule goes, without a failing load', async () => {
    const s = new AutomationsState('ws_1', 'ag_1');
    await s.load();
    await s.runNow(s.schedules[0]!);
    calls = [];
    // Deleted in another window (or before our own delete call answered).
    s.onEvent({ workspace: 'ws_1', kind: 'schedule.deleted', id: 'sc_1', agent: 'ag_1' });
    await settle();
    expect(calls.some((c) => c.includes('/history'))).toBe(false);
    expect(s.history).toEqual({});
    // A refresh that fails (the schedule is gone) closes it instead of throwing.
    await s.runNow(s.schedules[0]!);
    delete routes['GET /api/workspaces/ws_1/schedules/sc_1/history?limit=50'];
    s.onEvent({ workspace: 'ws_1', kind: 'schedule.updated', id: 'sc_1', agent: 'ag_1' });
    await settle();
    await settle();
    expect(s.history).toEqual({});
  });

  it('keeps a whole URL in memory after create and rotate, and forgets it', async () => {
    const s = new AutomationsState('ws_1', 'ag_1');
    const t = await s.createTrigger({ name: 'CI', instruction: 'Look' });
    expect(s.urls.tr_2).toBe('http://h/hooks/rrh_one');
    await s.rotate(t, 3600);
    expect(s.urls.tr_2).toBe('http://h/hooks/rrh_two');
    s.hideUrl('tr_2');
    expect(s.urls).toEqual({});
    await s.rotate(t, 0);
    await s.deleteTrigger(t);
    expect(s.urls).toEqual({});
    expect(s.triggers.some((x) => x.id === 'tr_2')).toBe(false);
  });
});

describe('filterZones', () => {
  const zones = ['America/New_York', 'America/Los_Angeles', 'Asia/Kolkata', 'Europe/Berlin', 'UTC'];
  it('finds zones by every word typed, and keeps the chosen one', () => {
    expect(filterZones(zones, 'new york')).toEqual(['America/New_York']);
    expect(filterZones(zones, 'europe ber')).toEqual(['Europe/Berlin']);
    expect(filterZones(zones, '  ')).toEqual(zones);
    expect(filterZones(zones, 'kolkata', 'UTC')).toEqual(['UTC', 'Asia/Kolkata']);
    expect(filterZones(zones, 'nowhere')).toEqual([]);
  });
});
