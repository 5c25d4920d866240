// Which of the app's dialogs is open (at most one at a time).
import type { Agent, Box } from './workspace';

export type DialogState =
  | { kind: 'newBox' }
  | { kind: 'renameBox'; box: Box }
  | { kind: 'deleteBox'; box: Box }
  | { kind: 'newAgent'; boxId?: string }
  | { kind: 'renameAgent'; agent: Agent }
  | { kind: 'deleteAgent'; agent: Agent }
  | { kind: 'newWorkspace' }
  | { kind: 'renameWorkspace' }
  | { kind: 'models'; fromGear?: boolean }
  | { kind: 'apikeys' }
  | { kind: 'variables' }
  | { kind: 'notificationSettings' }
  | { kind: 'general' }
  | { kind: 'relay' }
  | { kind: 'joinWorkspace' }
  | { kind: 'backups' }
  | { kind: 'history' }
  | { kind: 'restoreWorkspace' }
  | { kind: 'deleteWorkspace' }
  | { kind: 'desktops' }
  | { kind: 'templates' }
  | { kind: 'brain'; pageId?: string }
  | { kind: 'saveTemplate'; agent: Agent }
  | { kind: 'about' };
