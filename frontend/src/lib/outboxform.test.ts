import { describe, expect, it } from 'vitest';
import { deliveryLine, emailProblem, emptyEmail, hookProblem, newHook, portFor } from './outboxform';
import type { EmailSettings, OutboxDelivery } from './outboxform';

const good: EmailSettings = {
  host: 'smtp.example.com',
  port: 587,
  tls: 'starttls',
  user: 'me',
  password: '${SMTP_PASSWORD}',
  from: 'Rerun <rerun@example.com>',
  to: 'me@example.com, you@example.com',
};

describe('email settings form', () => {
  it('accepts good settings and an empty host (email off)', () => {
    expect(emailProblem(good)).toBe('');
    expect(emailProblem(emptyEmail())).toBe('');
  });
  it('says what to fix', () => {
    const cases: [Partial<EmailSettings>, RegExp][] = [
      [{ password: 'hunter2' }, /workspace variable, e.g. \$\{SMTP_PASSWORD\}/],
      [{ tls: 'none' }, /only for a server on this computer/],
      [{ host: 'smtp://x' }, /no scheme/],
      [{ port: 0 }, /1 to 65535/],
      [{ user: '' }, /needs a user/],
      [{ from: 'nobody' }, /from address/],
      [{ to: 'me@example.com, nope' }, /to address/],
      [{ to: '' }, /to address/],
    ];
    for (const [edit, want] of cases) expect(emailProblem({ ...good, ...edit })).toMatch(want);
  });
  it('allows no TLS to this computer only', () => {
    expect(emailProblem({ ...good, host: '127.0.0.1', tls: 'none', port: 1025 })).toBe('');
    expect(emailProblem({ ...good, host: 'localhost', tls: 'none' })).toBe('');
    expect(emailProblem({ ...good, host: '10.0.0.2', tls: 'none' })).not.toBe('');
  });
  it('moves a default port with the TLS mode, keeps a chosen one', () => {
    expect(portFor(good, 'tls')).toBe(465);
    expect(portFor({ ...good, port: 2525 }, 'tls')).toBe(2525);
  });
});

describe('hook form', () => {
  it('checks URL and secret by flavour', () => {
    expect(hookProblem({ ...newHook('slack'), url: 'https://hooks.slack.com/services/${SLACK_HOOK}' })).toBe('');
    expect(hookProblem({ ...newHook('ntfy'), url: 'http://127.0.0.1:8080/t' })).toBe('');
    expect(hookProblem({ ...newHook('ntfy'), url: 'http://ntfy.sh/t' })).toMatch(/https/);
    expect(hookProblem({ ...newHook('slack'), url: 'hooks.slack.com' })).toMatch(/full address/);
    expect(hookProblem({ ...newHook('json'), url: 'https://x.example/' })).toMatch(/signing secret/);
    expect(hookProblem({ ...newHook('json'), url: 'https://x.example/', secret: 'whsec_abc' })).toMatch(/signing secret/);
    expect(hookProblem({ ...newHook('json'), url: 'https://x.example/', secret: '${HOOK_SECRET}' })).toBe('');
    expect(hookProblem({ ...newHook('discord'), url: 'https://x.example/', secret: '${S}' })).toMatch(/Only JSON/);
  });
});

describe('delivery line', () => {
  const d: OutboxDelivery = {
    id: 'ob_1', notification_id: 'nt_1', channel: 'email', target: 'email', target_name: 'email to me@example.com',
    status: 'failed', attempts: 8, last_error: '550 5.1.0 Recipient not allowed', next_at: null, created_at: '', sent_at: null,
  };
  it('shows the server answer', () => {
    expect(deliveryLine(d)).toBe('Email not sent after 8 attempts: 550 5.1.0 Recipient not allowed');
    const now = Date.parse('2026-12-02T01:00:00Z');
    expect(deliveryLine({ ...d, channel: 'hook', target_name: 'Ops', status: 'pending', attempts: 1, next_at: '2026-12-02T01:00:30Z' }, now)).toBe(
      'Hook Ops failed (550 5.1.0 Recipient not allowed); retrying in 30s',
    );
  });
});
