import type { Autostart, WhenClosed } from './types';

/** The line under Settings → General's "Start Rerun when you log in" switch. */
export function autostartHint(a: Autostart): string {
  if (!a.available) return 'Not available here: start at login needs the desktop app.';
  if (a.enabled) return `Rerun starts in the tray when you log in, without a window (${a.path}).`;
  return 'Off: your coworkers work only while you have started Rerun.';
}

/** The choices of Settings → General's "When the window closes". */
export const WHEN_CLOSED_CHOICES: { id: WhenClosed; label: string; hint: string }[] = [
  {
    id: 'background',
    label: 'Keep working in the background',
    hint: 'The window hides; your coworkers keep working and the tray icon opens Rerun again.',
  },
  {
    id: 'quit',
    label: 'Quit Rerun',
    hint: 'Rerun quits, asking first when coworkers are working. Nothing runs until you start it again.',
  },
];
