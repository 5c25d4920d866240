// Settings → Backups as the API sends them: a backup made into a folder and the daily schedule.

/** A backup made into a folder (Settings → Backups), or its failure. */
export interface FolderBackup {
  path: string;
  files: number;
  bytes: number;
  took: string;
  finished: string;
  error?: string;
  removed?: string[];
}

/** Settings → Backups' daily schedule; the passphrase itself is never sent back. */
export interface BackupSchedule {
  enabled: boolean;
  folder: string;
  keep: number;
  has_passphrase: boolean;
}
