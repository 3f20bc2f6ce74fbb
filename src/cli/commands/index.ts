import type { CommandContext, CommandDefinition } from '../command.ts';

// Each command's module (and what it imports) is loaded only when that command runs: `serve`
// with several workers keeps a supervisor that must not hold every other command's code.
function loaded<M>(load: () => Promise<M>, pick: (module: M) => CommandDefinition['run']): CommandDefinition['run'] {
  return async (context: CommandContext) => pick(await load())(context);
}

export const commands: Record<string, CommandDefinition> = {
  serve: { usage: ['serve                      start every enabled surface'], actions: [], values: [], run: loaded(() => import('./serve.ts'), (module) => module.serveCommand) },
  migrate: { usage: ['migrate                    apply database migrations and exit'], actions: [], values: [], run: loaded(() => import('./migrate.ts'), (module) => module.migrateCommand) },
  backup: { usage: ['backup --to DIR            database, then stored DICOM files, then a manifest, while the service runs'], actions: [], values: ['to'], run: loaded(() => import('./backup.ts'), (module) => module.backupCommand) },
  restore: { usage: ['restore --from DIR         a backup into an empty database and DICOM storage folder'], actions: [], values: ['from'], run: loaded(() => import('./restore.ts'), (module) => module.restoreCommand) },
  site: {
    usage: [
      'site create --name N --ae-title AET [--patient-put-creates] [--allow-any-ip] [--time-zone TZ]',
      'site update SITE [--name N] [--ae-title AET] [--time-zone TZ] [--[no-]patient-put-creates] [--[no-]allow-any-ip] [--data-access-retention-days D] [--message-body-retention-days N] [--export-retention-hours H] [--refused-traffic-retention-days N]   (--time-zone "" removes it; "" keeps bodies for ever, or gives back the service-wide export or refused-traffic retention)',
      'site show SITE',
      'site usage SITE [--refresh]   storage use: database rows and bytes per table, DICOM bytes',
      'site export SITE --to DIR   the whole site (FHIR NDJSON, DICOM files, message log, settings, logs) into a new or empty folder',
      'site offboard SITE [--grace-days N] | --cancel   mark a site for purging after N days (default 30)',
      'site purge SITE   delete everything of a marked site whose grace period has passed',
      'site list',
    ],
    actions: ['create', 'update', 'show', 'usage', 'export', 'offboard', 'purge', 'list'],
    values: ['name', 'ae-title', 'time-zone', 'data-access-retention-days', 'message-body-retention-days', 'export-retention-hours', 'refused-traffic-retention-days', 'grace-days', 'to'],
    flags: ['patient-put-creates', 'allow-any-ip', 'no-patient-put-creates', 'no-allow-any-ip', 'refresh', 'cancel'],
    run: loaded(() => import('./site.ts'), (module) => module.siteCommand),
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
    run: loaded(() => import('./user.ts'), (module) => module.userCommand),
  },
  key: {
    usage: ['key create --site SITE --user USER [--label L]', 'key revoke KEY_ID [--site SITE]', 'key list --site SITE'],
    actions: ['create', 'revoke', 'list'],
    values: ['site', 'user', 'label'],
    run: loaded(() => import('./key.ts'), (module) => module.keyCommand),
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
    run: loaded(() => import('./client.ts'), (module) => module.clientCommand),
  },
  'dicom-destination': {
    usage: [
      'dicom-destination create --site SITE --ae-title AET --host HOST --port PORT   a C-MOVE destination of the site',
      'dicom-destination list --site SITE',
      'dicom-destination delete ID_OR_AE_TITLE --site SITE',
    ],
    actions: ['create', 'list', 'delete'],
    values: ['site', 'ae-title', 'host', 'port'],
    run: loaded(() => import('./dicom-destination.ts'), (module) => module.dicomDestinationCommand),
  },
  studies: {
    usage: [
      'studies list --site SITE [--from DATE] [--to DATE] [--modality M] [--patient P] [--limit N]',
      'studies show STUDY_UID --site SITE   a study with its series, procedure steps and reports',
    ],
    actions: ['list', 'show'],
    values: ['site', 'from', 'to', 'modality', 'patient', 'limit'],
    run: loaded(() => import('./studies.ts'), (module) => module.studiesCommand),
  },
  patients: {
    usage: [
      'patients search --site SITE [--name N] [--identifier ID] [--birth-date YYYY-MM-DD] [--limit N]   at least one of the three',
      'patients show PATIENT_ID --site SITE   the patient\'s chart (resources as FHIR JSON with --json)',
    ],
    actions: ['search', 'show'],
    values: ['site', 'name', 'identifier', 'birth-date', 'limit'],
    run: loaded(() => import('./patients.ts'), (module) => module.patientsCommand),
  },
  report: {
    usage: [
      'report create --site SITE --study STUDY_UID --text T [--status draft|completed] [--author USER]',
      'report update REPORT_ID --site SITE --text T [--version N]   replace a draft\'s text',
      'report complete REPORT_ID --site SITE [--text T] [--version N] [--author USER]   sign a draft',
    ],
    actions: ['create', 'update', 'complete'],
    values: ['site', 'study', 'text', 'status', 'author', 'version'],
    run: loaded(() => import('./report.ts'), (module) => module.reportCommand),
  },
  audit: {
    usage: [
      'audit list --site SITE [--patient ID] [--user USER] [--key KEY] [--since T] [--until T] [--limit N] [--before CURSOR]',
      'audit purge [--site SITE]   drop data access records older than each site\'s retention',
      'audit changes [--site SITE] [--limit N] [--before CURSOR]   the audit log of changes (without --site: the whole service\'s)',
    ],
    actions: ['list', 'purge', 'changes'],
    values: ['site', 'patient', 'user', 'key', 'since', 'until', 'limit', 'before'],
    run: async (context) => (context.action === 'changes' ? (await import('./audit-changes.ts')).auditChangesCommand(context) : (await import('./audit.ts')).auditCommand(context)),
  },
  exports: {
    usage: ['exports list --site SITE', 'exports cancel EXPORT_ID --site SITE   cancel an export, or delete a finished one, with its files'],
    actions: ['list', 'cancel'],
    values: ['site'],
    run: loaded(() => import('./exports.ts'), (module) => module.exportsCommand),
  },
  connectivity: {
    usage: ['connectivity show --site SITE   the DICOM address, called AE title and MLLP port for the site\'s senders'],
    actions: ['show'],
    values: ['site'],
    run: loaded(() => import('./connectivity.ts'), (module) => module.connectivityCommand),
  },
  'automation-token': {
    usage: [
      'automation-token create [--label L] [--expires 90d|ISO_TIME]   a service administrator\'s token for the admin JSON API, shown once',
      'automation-token list',
      'automation-token revoke TOKEN   (its id or prefix)',
    ],
    actions: ['create', 'list', 'revoke'],
    values: ['label', 'expires'],
    run: loaded(() => import('./automation-token.ts'), (module) => module.automationTokenCommand),
  },
  messages: {
    usage: [
      'messages list --site SITE [--from T] [--to T] [--type ADT^A01] [--outcome AA|AE|AR|refused] [--control-id ID] [--patient ID] [--sender MSH3_OR_MSH4] [--transport mllp|http] [--protocol hl7v2|hl7v3] [--sort newest|oldest] [--at T] [--limit N] [--after CURSOR]',
      'messages show MESSAGE_ID --site SITE   one message: its raw text, the acknowledgement sent, its reprocessed attempts',
      'messages reprocess MESSAGE_ID --site SITE   run a failed message again (exit 3: the attempt was not accepted)',
    ],
    actions: ['list', 'show', 'reprocess'],
    values: ['site', 'limit', 'after', 'at', 'from', 'to', 'type', 'outcome', 'control-id', 'patient', 'sender', 'transport', 'protocol', 'sort'],
    run: loaded(() => import('./messages.ts'), (module) => module.messagesCommand),
  },
  refused: {
    usage: ['refused list [--site SITE | --no-site] [--surface mllp|dicom|http] [--limit N] [--before CURSOR]   refused connections, associations and API keys'],
    actions: ['list'],
    values: ['site', 'surface', 'limit', 'before'],
    flags: ['no-site'],
    run: loaded(() => import('./refused.ts'), (module) => module.refusedCommand),
  },
};
