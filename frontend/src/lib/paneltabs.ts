// The agent panel's sections, in two rows: what the coworker does, and how it is set up.

export const PANEL_TABS = [
  { id: 'chat', label: 'Chat', row: 0, keywords: 'talk message conversation' },
  { id: 'handle', label: 'To handle', row: 0, keywords: 'inbox questions approvals pauses cards' },
  { id: 'desktop', label: 'Desktop', row: 0, keywords: 'browser screen takeover' },
  { id: 'monitoring', label: 'Monitoring', row: 0, keywords: 'runs usage cost tokens' },
  { id: 'logs', label: 'Logs', row: 0, keywords: 'run steps tool calls' },
  { id: 'memory', label: 'Memory', row: 1, keywords: 'memories remember' },
  { id: 'skills', label: 'Skills', row: 1, keywords: 'skill' },
  { id: 'apps', label: 'Apps', row: 1, keywords: 'mcp connectors integrations' },
  { id: 'automations', label: 'Automations', row: 1, keywords: 'schedules triggers cron webhooks' },
  { id: 'settings', label: 'Settings', row: 1, keywords: 'name soul model capabilities budget' },
] as const;

export type PanelTabId = (typeof PANEL_TABS)[number]['id'];
