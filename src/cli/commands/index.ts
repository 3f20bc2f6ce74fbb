import type { CommandDefinition } from '../command.ts';
import { auditCommand } from './audit.ts';
import { auditChangesCommand } from './audit-changes.ts';
import { connectivityCommand } from './connectivity.ts';
import { exportsCommand } from './exports.ts';
import { automationTokenCommand } from './automation-token.ts';
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
      'site update SITE [--name N] [--ae-title AET] [--time-zone TZ] [--[no-]patient-put-creates] [--[no-]allow-any-ip] [--data-access-retention-days D]   (--time-zone "" removes it)',
      'site show SITE',
      'site list',
    ],
    actions: ['create', 'update', 'show', 'list'],
    values: ['name', 'ae-title', 'time-zone', 'data-access-retention-days'],
    flags: ['patient-put-creates', 'allow-any-ip', 'no-patient-put-creates', 'no-allow-any-ip'],
    run: siteCommand,
  },
  user: {
    usage: [
      'user create --site SITE --email E [--role admin|clinician|service-admin] [--password P]',
      'user update USER [--site SITE] [--role admin|clinician] [--deactivate|--reactivate]',
      'user password USER [--site SITE] [--password P]   reset (generated and shown once without --password); ends their sessions',
      'user list [--site SITE]',
    ],
    actions: ['create', 'update', 'password', 'list'],
    values: ['site', 'email', 'role', 'password'],
    flags: ['deactivate', 'reactivate'],
    run: userCommand,
  },
  key: {
    usage: ['key create --site SITE --user USER [--label L]', 'key revoke KEY_ID [--site SITE]', 'key list --site SITE'],
    actions: ['create', 'revoke', 'list'],
    values: ['site', 'user', 'label'],
    run: keyCommand,
  },
  client: {
    usage: [
      'client create --site SITE --name N --protocol hl7-mllp --allowed-ips LIST [--sending-application A] [--sending-facility F] [--default-charset C] [--time-zone TZ] [--approve-overlap]',
      'client update CLIENT --site SITE [--time-zone TZ] [--name N] [--allowed-ips LIST] [--sending-application A] [--sending-facility F] [--default-charset C] [--enable|--disable] [--approve-overlap]',
      'client list --site SITE',
    ],
    actions: ['create', 'update', 'list'],
    values: ['site', 'name', 'protocol', 'allowed-ips', 'sending-application', 'sending-facility', 'default-charset', 'time-zone'],
    flags: ['approve-overlap', 'enable', 'disable'],
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
    usage: [
      'report create --site SITE --study STUDY_UID --text T [--status draft|completed] [--author USER]',
      'report update REPORT_ID --site SITE --text T [--version N]   replace a draft\'s text',
      'report complete REPORT_ID --site SITE [--text T] [--version N] [--author USER]   sign a draft',
    ],
    actions: ['create', 'update', 'complete'],
    values: ['site', 'study', 'text', 'status', 'author', 'version'],
    run: reportCommand,
  },
  audit: {
    usage: [
      'audit list --site SITE [--patient ID] [--user USER] [--key KEY] [--since T] [--until T] [--limit N] [--before CURSOR]',
      'audit purge [--site SITE]   drop data access records older than each site\'s retention',
      'audit changes [--site SITE] [--limit N] [--before CURSOR]   the audit log of changes (without --site: the whole service\'s)',
    ],
    actions: ['list', 'purge', 'changes'],
    values: ['site', 'patient', 'user', 'key', 'since', 'until', 'limit', 'before'],
    run: (context) => (context.action === 'changes' ? auditChangesCommand(context) : auditCommand(context)),
  },
  exports: {
    usage: ['exports list --site SITE', 'exports cancel EXPORT_ID --site SITE   cancel an export, or delete a finished one, with its files'],
    actions: ['list', 'cancel'],
    values: ['site'],
    run: exportsCommand,
  },
  connectivity: {
    usage: ['connectivity show --site SITE   the DICOM address, called AE title and MLLP port for the site\'s senders'],
    actions: ['show'],
    values: ['site'],
    run: connectivityCommand,
  },
  'automation-token': {
    usage: [
      'automation-token create [--label L] [--expires 90d|ISO_TIME]   a service administrator\'s token for the admin JSON API, shown once',
      'automation-token list',
      'automation-token revoke TOKEN   (its id or prefix)',
    ],
    actions: ['create', 'list', 'revoke'],
    values: ['label', 'expires'],
    run: automationTokenCommand,
  },
  messages: {
    usage: ['messages list --site SITE [--limit N] [--before CURSOR]'],
    actions: ['list'],
    values: ['site', 'limit', 'before'],
    run: messagesCommand,
  },
};
