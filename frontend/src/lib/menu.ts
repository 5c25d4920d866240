// What a context menu shows.
export type MenuItem =
  | {
      label: string;
      action?: () => void;
      submenu?: MenuItem[];
      danger?: boolean;
      disabled?: boolean;
      hint?: string;
    }
  | { separator: true };

export type MenuRequest = { x: number; y: number; items: MenuItem[]; label: string };

export function isSeparator(i: MenuItem): i is { separator: true } {
  return 'separator' in i;
}
