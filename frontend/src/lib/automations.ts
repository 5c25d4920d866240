// The Automations tab, pure: cron presets to and from an expression, times in a
// schedule's zone and in local time, catch-up durations, rotation grace periods
// and the curl line that calls a trigger.

export type ScheduleKind = 'cron' | 'once';

export type CatchUp = 'once' | 'skip';

/** A recurring (cron, in a time zone) or one-off instruction; runs in its own session. */
export type Schedule = {
  id: string;
  agent_id: string;
  session_id: string;
  name: string;
  instruction: string;
  kind: ScheduleKind;
  /** 5 fields or @hourly/@daily/…; '' for once. */
  cron: string;
  /** IANA, e.g. "Europe/Berlin". */
  timezone: string;
  /** once: the moment (RFC 3339). */
  at: string | null;
  enabled: boolean;
  /** After sleep or downtime: run once if missed within catch_up_within, or skip. */
  catch_up: CatchUp;
  /** A Go duration, e.g. "24h0m0s". */
  catch_up_within: string;
  next_fire_at: string | null;
  last_fired_at: string | null;
  /** Human-readable, e.g. "Every day at 09:00". */
  description: string;
  created_at: string;
  updated_at: string;
};

/** What POST …/schedules takes; PATCH takes any part of it. */
export type ScheduleInput = {
  name: string;
  instruction: string;
  kind: ScheduleKind;
  cron?: string;
  timezone?: string;
  at?: string | null;
  enabled?: boolean;
  catch_up?: CatchUp;
  /** A Go duration or a number of seconds. */
  catch_up_within?: string | number;
};

export type SchedulePreviewInput = { kind: ScheduleKind; cron: string; timezone: string; at: string | null };

export type SchedulePreview = { description: string; next: string[] };

/** One firing of a schedule (or a time it missed). */
export type Fire = {
  id: string;
  schedule_id: string;
  scheduled_for: string;
  fired_at: string;
  outcome: 'fired' | 'missed' | 'manual';
  /** '' for missed. */
  run_id: string;
  note: string;
  error: string;
};

/** A webhook URL that starts a run; the URL is the credential, shown whole only on create and rotate. */
export type Trigger = {
  id: string;
  agent_id: string;
  session_id: string;
  name: string;
  instruction: string;
  /** Allowed HTTP methods, default ['POST']. */
  methods: string[];
  /** "rrh_abc123". */
  token_prefix: string;
  /** '' = no signature check; else the variable holding the Standard Webhooks secret. */
  signing_secret_var: string;
  enabled: boolean;
  /** Calls per minute. */
  rate_limit: number;
  /** After a rotation with a grace period. */
  old_token_expires_at: string | null;
  /** "http://127.0.0.1:7777/hooks/rrh_abc123…", for display. */
  url_prefix: string;
  /** "https://relay.example.com/h/rrh_abc123…" when the workspace is linked to a relay. */
  public_url_prefix?: string;
  created_at: string;
  updated_at: string;
  rotated_at: string | null;
};

export type TriggerInput = {
  name: string;
  instruction: string;
  methods?: string[];
  signing_secret_var?: string;
  enabled?: boolean;
  rate_limit?: number;
};

/** A trigger with its whole URL: answered by create and rotate only. */
export type TriggerWithUrl = { trigger: Trigger; url: string; /** Through the workspace's relay, when linked. */ public_url?: string };

/** One call of a trigger's URL (or a test). */
export type TriggerDelivery = {
  id: string;
  trigger_id: string;
  received_at: string;
  /** The HTTP status answered. */
  status: number;
  /** 'queued' | 'duplicate' | 'rejected' | 'test' | … */
  outcome: string;
  run_id: string;
  error: string;
  method: string;
  content_type: string;
  size: number;
};

// ---- cron presets ----------------------------------------------------------

/** How often a schedule repeats, as the editor offers it; 'custom' is any other expression. */
export type Repeat = 'hourly' | 'daily' | 'weekdays' | 'weekly' | 'monthly' | 'custom';

export type CronPreset = {
  repeat: Repeat;
  minute: number;
  hour: number;
  /** 0 = Sunday … 6 = Saturday (weekly). */
  weekday: number;
  /** 1..28 (monthly: later days are skipped by short months). */
  monthday: number;
};

export const REPEATS: { id: Repeat; label: string }[] = [
  { id: 'hourly', label: 'Every hour' },
  { id: 'daily', label: 'Every day' },
  { id: 'weekdays', label: 'Weekdays (Mon–Fri)' },
  { id: 'weekly', label: 'Every week' },
  { id: 'monthly', label: 'Every month' },
  { id: 'custom', label: 'Custom (cron expression)' },
];

export const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

export const DEFAULT_PRESET: CronPreset = { repeat: 'daily', minute: 0, hour: 9, weekday: 1, monthday: 1 };

const DAY_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

/** The expression a preset stands for; '' for 'custom' (the expression is typed). */
export function presetCron(p: CronPreset): string {
  const m = p.minute;
  const h = p.hour;
  switch (p.repeat) {
    case 'hourly':
      return `${m} * * * *`;
    case 'daily':
      return `${m} ${h} * * *`;
    case 'weekdays':
      return `${m} ${h} * * 1-5`;
    case 'weekly':
      return `${m} ${h} * * ${p.weekday}`;
    case 'monthly':
      return `${m} ${h} ${p.monthday} * *`;
    default:
      return '';
  }
}

function int(s: string, min: number, max: number): number | undefined {
  if (!/^\d{1,2}$/.test(s)) return undefined;
  const n = Number(s);
  return n >= min && n <= max ? n : undefined;
}

function weekday(s: string): number | undefined {
  const n = int(s, 0, 7);
  if (n !== undefined) return n % 7;
  const i = DAY_NAMES.indexOf(s.toLowerCase());
  return i < 0 ? undefined : i;
}

/**
 * The preset an expression matches (descriptors like @daily included), with
 * `fallback`'s values for the parts it does not set; repeat 'custom' when none does.
 */
export function parseCron(expr: string, fallback: CronPreset = DEFAULT_PRESET): CronPreset {
  const e = expr.trim().replace(/\s+/g, ' ').toLowerCase();
  const at = (repeat: Repeat, hour: number, minute: number, more: Partial<CronPreset> = {}): CronPreset => ({
    ...fallback,
    repeat,
    hour,
    minute,
    ...more,
  });
  switch (e) {
    case '@hourly':
      return at('hourly', fallback.hour, 0);
    case '@daily':
    case '@midnight':
      return at('daily', 0, 0);
    case '@weekly':
      return at('weekly', 0, 0, { weekday: 0 });
    case '@monthly':
      return at('monthly', 0, 0, { monthday: 1 });
  }
  const custom = { ...fallback, repeat: 'custom' as const };
  const f = e.split(' ');
  if (f.length !== 5) return custom;
  const [min, hour, dom, month, dow] = f as [string, string, string, string, string];
  const m = int(min, 0, 59);
  if (m === undefined || month !== '*') return custom;
  if (hour === '*') return dom === '*' && dow === '*' ? at('hourly', fallback.hour, m) : custom;
  const h = int(hour, 0, 23);
  if (h === undefined) return custom;
  if (dom === '*' && dow === '*') return at('daily', h, m);
  if (dom === '*') {
    if (dow === '1-5' || dow === 'mon-fri') return at('weekdays', h, m);
    const d = weekday(dow);
    return d === undefined ? custom : at('weekly', h, m, { weekday: d });
  }
  if (dow === '*') {
    const d = int(dom, 1, 28);
    return d === undefined ? custom : at('monthly', h, m, { monthday: d });
  }
  return custom;
}

/** "09:05" for a preset's time (the value of an <input type=time>). */
export const presetTime = (p: Pick<CronPreset, 'hour' | 'minute'>) =>
  `${String(p.hour).padStart(2, '0')}:${String(p.minute).padStart(2, '0')}`;

/** Reads "HH:MM" into hour and minute; undefined when it is not a time. */
export function readTime(hhmm: string): { hour: number; minute: number } | undefined {
  const m = /^(\d{1,2}):(\d{2})/.exec(hhmm);
  if (!m) return undefined;
  const hour = Number(m[1]);
  const minute = Number(m[2]);
  return hour <= 23 && minute <= 59 ? { hour, minute } : undefined;
}

// ---- time zones -------------------------------------------------------------

/** The browser's IANA zone ('UTC' when it does not say). */
export function localZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
}

/** Every zone the browser knows, sorted, with UTC and `extra` (a schedule's own) in it. */
export function timeZones(extra: string[] = []): string[] {
  let all: string[] = [];
  try {
    all = Intl.supportedValuesOf('timeZone');
  } catch {
    // an old browser: the zones at hand below
  }
  return [...new Set([...all, 'UTC', ...extra.filter(Boolean)])].sort((a, b) => a.localeCompare(b));
}

/**
 * The zones a search finds: every word typed in the zone's name ("new york",
 * "europe ber", "kolkata"), spaces and underscores alike. The zone chosen now
 * stays listed so the picker never loses it.
 */
export function filterZones(zones: string[], query: string, keep = ''): string[] {
  const words = query.toLowerCase().split(/[\s_/]+/).filter(Boolean);
  if (words.length === 0) return zones;
  const found = zones.filter((z) => {
    const name = z.toLowerCase().replace(/_/g, ' ');
    return words.every((w) => name.includes(w));
  });
  return keep && !found.includes(keep) && zones.includes(keep) ? [keep, ...found] : found;
}

/** "Berlin" for Europe/Berlin, "New York" for America/New_York, "UTC" for UTC. */
export function zoneCity(tz: string): string {
  const last = tz.split('/').pop() ?? tz;
  return last.replace(/_/g, ' ');
}

const formats = new Map<string, Intl.DateTimeFormat>();
function format(tz: string, locale: string | undefined, opts: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  const key = `${tz}|${locale ?? ''}|${JSON.stringify(opts)}`;
  let f = formats.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat(locale, { timeZone: tz, ...opts });
    formats.set(key, f);
  }
  return f;
}

const WALL: Intl.DateTimeFormatOptions = { weekday: 'short', day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit' };

/** A moment as read on a clock in `tz`, e.g. "Mon 3 Mar, 09:00" (the locale's order). */
export function zonedTime(iso: string, tz: string, locale?: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  try {
    return format(tz, locale, WALL).format(d);
  } catch {
    return format('UTC', locale, WALL).format(d) + ' UTC';
  }
}

/** The numbers a clock in `tz` shows at `ms`. */
function wallParts(ms: number, tz: string): { y: number; mo: number; d: number; h: number; mi: number; s: number } {
  const parts = format(tz, 'en-US', {
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  }).formatToParts(new Date(ms));
  const n = (t: string) => Number(parts.find((p) => p.type === t)?.value ?? 0);
  return { y: n('year'), mo: n('month'), d: n('day'), h: n('hour') % 24, mi: n('minute'), s: n('second') };
}

/** How far `tz` is ahead of UTC at `ms`, in ms. */
function zoneOffset(ms: number, tz: string): number {
  const p = wallParts(ms, tz);
  return Date.UTC(p.y, p.mo - 1, p.d, p.h, p.mi, p.s) - (ms - (((ms % 1000) + 1000) % 1000));
}

/**
 * The moment a clock in `tz` reads `local` ("2025-03-30T09:00", as an
 * <input type=datetime-local> gives it), as RFC 3339 UTC; '' when unreadable.
 * A time skipped by a DST change moves forward by the change (02:30 → 03:30).
 */
export function zonedToUtc(local: string, tz: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(local.trim());
  if (!m) return '';
  const guess = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6] ?? 0));
  try {
    const first = zoneOffset(guess, tz);
    let t = guess - first;
    const second = zoneOffset(t, tz);
    if (second !== first) t = guess - second;
    return new Date(t).toISOString().replace('.000Z', 'Z');
  } catch {
    return '';
  }
}

/** A moment as an <input type=datetime-local> value on a clock in `tz`. */
export function utcToZoned(iso: string, tz: string): string {
  const ms = new Date(iso).getTime();
  if (Number.isNaN(ms)) return '';
  try {
    const p = wallParts(ms, tz);
    const two = (n: number) => String(n).padStart(2, '0');
    return `${p.y}-${two(p.mo)}-${two(p.d)}T${two(p.h)}:${two(p.mi)}`;
  } catch {
    return '';
  }
}

/** A fire time for the list: on the schedule's clock, and on yours when that reads differently. */
export type FireTime = { zoned: string; city: string; local: string | null };

export function fireTime(iso: string, tz: string, local: string = localZone(), locale?: string): FireTime {
  const zoned = zonedTime(iso, tz, locale);
  const mine = zonedTime(iso, local, locale);
  return { zoned, city: zoneCity(tz), local: mine === zoned ? null : mine };
}

/** "in 4 min", "in 3 h", "in 2 days", "now" for a coming moment; '' when past or unknown. */
export function until(iso: string | null, now = Date.now()): string {
  if (!iso) return '';
  const ms = new Date(iso).getTime() - now;
  if (Number.isNaN(ms) || ms < -60_000) return '';
  const min = Math.round(ms / 60_000);
  if (min <= 0) return 'now';
  if (min < 60) return `in ${min} min`;
  const h = Math.round(min / 60);
  if (h < 48) return `in ${h} h`;
  return `in ${Math.round(h / 24)} days`;
}

// ---- catch-up -----------------------------------------------------------------

/** Seconds in a Go duration ("24h0m0s", "90m", "1h30m") or a number of seconds; NaN when unreadable. */
export function durationSeconds(d: string | number): number {
  if (typeof d === 'number') return d;
  const s = d.trim();
  if (/^\d+(\.\d+)?$/.test(s)) return Number(s);
  if (s === '0') return 0;
  const re = /(\d+(?:\.\d+)?)(h|m(?!s)|s|ms)/gy;
  const unit: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 0.001 };
  let total = 0;
  let at = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(s))) {
    total += Number(m[1]) * unit[m[2]!]!;
    at = re.lastIndex;
  }
  return at === s.length && at > 0 ? total : NaN;
}

/** Whole hours of a catch-up window (24 when unreadable). */
export function catchUpHours(d: string | number): number {
  const s = durationSeconds(d);
  return Number.isFinite(s) && s > 0 ? Math.max(1, Math.round(s / 3600)) : 24;
}

/** "Runs once if missed within 24 h" / "Skips missed times". */
export function catchUpLabel(mode: 'once' | 'skip', within: string | number): string {
  return mode === 'skip' ? 'Skips missed times' : `Runs once if missed within ${catchUpHours(within)} h`;
}

// ---- history and deliveries ---------------------------------------------------

export const FIRE_LABEL: Record<Fire['outcome'], string> = { fired: 'Fired', missed: 'Missed', manual: 'Manual' };

/** ok: answered 2xx; bad: refused (4xx/5xx). */
export const deliveryTone = (d: Pick<TriggerDelivery, 'status'>) => (d.status >= 200 && d.status < 300 ? 'ok' : 'bad');

/** "0 B", "512 B", "1.5 KB", "2.0 MB". */
export function formatSize(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 1024) return `${Math.max(0, Math.round(bytes || 0))} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

// ---- triggers -----------------------------------------------------------------

export const METHODS = ['POST', 'PUT', 'PATCH', 'GET', 'DELETE'] as const;

/** How long the old URL keeps working after a rotation. */
export const GRACE_OPTIONS: { seconds: number; label: string }[] = [
  { seconds: 0, label: 'Stop the old URL now' },
  { seconds: 3600, label: 'Keep the old URL working for 1 hour' },
  { seconds: 86400, label: 'Keep the old URL working for 1 day' },
];

export const SAMPLE_PAYLOAD = '{\n  "event": "test",\n  "message": "Hello from Rerun"\n}';

export const CONTENT_TYPES = ['application/json', 'text/plain', 'application/x-www-form-urlencoded'];

/** Why a test payload cannot be sent as this content type; '' when it can. */
export function payloadError(text: string, contentType: string): string {
  if (!/json/i.test(contentType) || text.trim() === '') return '';
  try {
    JSON.parse(text);
    return '';
  } catch (err) {
    return `Not valid JSON: ${err instanceof Error ? err.message : String(err)}`;
  }
}

/** A string as one shell word. */
export function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The curl line that calls a trigger (a body only for methods that carry one). */
export function curlExample(url: string, method = 'POST', contentType = 'application/json', body = '{"hello":"world"}'): string {
  const m = method.toUpperCase();
  const parts = [`curl -X ${m} ${shellQuote(url)}`];
  if (m !== 'GET' && m !== 'DELETE' && m !== 'HEAD') {
    parts.push(`-H ${shellQuote(`Content-Type: ${contentType}`)}`, `-d ${shellQuote(body)}`);
  }
  return parts.join(' \\\n  ');
}

/** "POST", "POST, PUT" — in the order of METHODS. */
export function methodList(methods: string[]): string {
  const order = (m: string) => {
    const i = (METHODS as readonly string[]).indexOf(m);
    return i < 0 ? METHODS.length : i;
  };
  return [...methods].sort((a, b) => order(a) - order(b) || a.localeCompare(b)).join(', ') || 'POST';
}
