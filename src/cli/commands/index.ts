import type { CommandDefinition } from '../command.ts';
import { auditCommand } from './audit.ts';
import { clientCommand } from './client.ts';
import { dicomDestinationCommand } from './dicom-destination.ts';
import { keyCommand } from './key.ts';
import { migrateCommand } from './migrate.ts';
import { serveCommand } from './serve.ts';
import { messagesCommand } from './messages.ts';
import { reportCommand } from './report.ts';
import { siteCommand } from './site.ts';
import { studiesCommand } from './studies.ts';
import { userCommand } from './user.ts';

export const commands: Record<string, CommandDefinition> = {
  serve: { usage: ['serve                      start every enabled surface'], actions: [], values: [], run: serveCommand },
  migrate: { usage: ['migrate                    apply database migrations and exit'], actions: [], values: [], run: migrateCommand },
  site: {
    usage: [
      'site create --name N --ae-title AET [--patient-put-creates] [--allow-any-ip] [--time-zone TZ]',
      'site update SITE [--name N] [--ae-title AET] [--time-zone TZ] [--message-body-retention-days N]   (--time-zone "" removes it; retention "" keeps bodies for ever)',
      'site usage SITE [--refresh]   storage use: database rows and bytes per table, DICOM bytes',
      'site offboard SITE [--grace-days N] | --cancel   mark a site for purging after N days (default 30)',
      'site purge SITE   delete everything of a marked site whose grace period has passed',
      'site list',
    ],
    actions: ['create', 'update', 'usage', 'offboard', 'purge', 'list'],
    values: ['name', 'ae-title', 'time-zone', 'message-body-retention-days', 'grace-days'],
    flags: ['patient-put-creates', 'allow-any-ip', 'refresh', 'cancel'],
    run: siteCommand,
  },
  user: {
    usage: ['user create --site SITE --email E [--role admin|clinician|service-admin] [--password P]', 'user list [--site SITE]'],
    actions: ['create', 'list'],
    values: ['site', 'email', 'role', 'password'],
    run: userCommand,
  },
  key: {
    usage: ['key create --site SITE --user USER [--label L]', 'key revoke KEY_ID', 'key list --site SITE'],
    actions: ['create', 'revoke', 'list'],
    values: ['site', 'user', 'label'],
    run: keyCommand,
  },
  client: {
    usage: [
      'client create --site SITE --name N --protocol hl7-mllp --allowed-ips LIST [--sending-application A] [--sending-facility F] [--default-charset C] [--time-zone TZ] [--approve-overlap]',
      'client update CLIENT --site SITE [--time-zone TZ] [--name N] [--allowed-ips LIST] [--sending-application A] [--sending-facility F] [--default-charset C] [--approve-overlap]',
      'client list --site SITE',
    ],
    actions: ['create', 'update', 'list'],
    values: ['site', 'name', 'protocol', 'allowed-ips', 'sending-application', 'sending-facility', 'default-charset', 'time-zone'],
    flags: ['approve-overlap'],
    run: clientCommand,
  },
  'dicom-destination': {
    usage: [
      'dicom-destination create --site SITE --ae-title AET --host HOST --port PORT   a C-MOVE destination of the site',
      'dicom-destination list --site SITE',
      'dicom-destination delete ID_OR_AE_TITLE --site SITE',
    ],
    actions: ['create', 'list', 'delete'],
    values: ['site', 'ae-title', 'host', 'port'],
    run: dicomDestinationCommand,
  },
  studies: {
    usage: ['studies list --site SITE [--from DATE] [--to DATE] [--modality M] [--patient P] [--limit N]'],
    actions: ['list'],
    values: ['site', 'from', 'to', 'modality', 'patient', 'limit'],
    run: studiesCommand,
  },
  report: {
    usage: ['report create --site SITE --study STUDY_UID --text T [--status draft|completed] [--author USER]'],
    actions: ['create'],
    values: ['site', 'study', 'text', 'status', 'author'],
    run: reportCommand,
  },
  audit: {
    usage: [
      'audit list --site SITE [--patient ID] [--user USER] [--key KEY] [--since T] [--until T] [--limit N] [--before CURSOR]',
      'audit purge [--site SITE]   drop data access records older than each site\'s retention',
    ],
    actions: ['list', 'purge'],
    values: ['site', 'patient', 'user', 'key', 'since', 'until', 'limit', 'before'],
    run: auditCommand,
  },
  messages: {
    usage: ['messages list --site SITE [--limit N] [--before CURSOR]'],
    actions: ['list'],
    values: ['site', 'limit', 'before'],
    run: messagesCommand,
  },
};
