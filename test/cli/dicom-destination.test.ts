import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runCli as run, runCliJson as runJson, useCliDatabase } from '../support/cli.ts';

const database = useCliDatabase();
const runCli = (args: string[]) => run(args, database.env());
const runCliJson = <T = Record<string, unknown>>(args: string[]) => runJson<T>(args, database.env());
const unique = () => Math.random().toString(36).slice(2, 8).toUpperCase();

test('dicom-destination create, list and delete, scoped to their site, with --json', async () => {
  const name = `Hospital ${unique()}`;
  const other = `Clinic ${unique()}`;
  await runCliJson(['site', 'create', '--name', name, '--ae-title', `H${unique()}`]);
  await runCliJson(['site', 'create', '--name', other, '--ae-title', `C${unique()}`]);
  const created = await runCliJson<{ id: string; ae_title: string; host: string; port: number }>(['dicom-destination', 'create', '--site', name, '--ae-title', 'PACS', '--host', '127.0.0.1', '--port', '11112']);
  assert.deepEqual([created.ae_title, created.host, created.port], ['PACS', '127.0.0.1', 11112]);
  assert.deepEqual((await runCliJson<{ id: string }[]>(['dicom-destination', 'list', '--site', name])).map((row) => row.id), [created.id]);
  assert.deepEqual(await runCliJson(['dicom-destination', 'list', '--site', other]), []);
  const table = await runCli(['dicom-destination', 'list', '--site', name]);
  assert.match(table.stdout, /PACS\s+127\.0\.0\.1\s+11112/);

  const refused = await runCli(['dicom-destination', 'delete', created.id, '--site', other]);
  assert.equal(refused.status, 1);
  assert.match(refused.stderr, /no such DICOM destination/, "another site's destination is not found");
  const deleted = await runCliJson<{ id: string }>(['dicom-destination', 'delete', 'pacs', '--site', name]);
  assert.equal(deleted.id, created.id, 'by AE title, without case');
  assert.deepEqual(await runCliJson(['dicom-destination', 'list', '--site', name]), []);
});

test('dicom-destination refuses bad input with a specific message', async () => {
  const name = `Hospital ${unique()}`;
  await runCliJson(['site', 'create', '--name', name, '--ae-title', `H${unique()}`]);
  await runCliJson(['dicom-destination', 'create', '--site', name, '--ae-title', 'PACS', '--host', 'pacs.example.org', '--port', '104']);
  const cases: [string[], RegExp, number][] = [
    [['dicom-destination', 'create', '--site', name, '--ae-title', 'pacs', '--host', 'h', '--port', '104'], /already has a destination with this AE title/, 1],
    [['dicom-destination', 'create', '--site', name, '--ae-title', 'WAY_TOO_LONG_AE_TITLE', '--host', 'h', '--port', '104'], /AE title must be 1 to 16 characters/, 1],
    [['dicom-destination', 'create', '--site', name, '--ae-title', 'A\\B', '--host', 'h', '--port', '104'], /without backslash/, 1],
    [['dicom-destination', 'create', '--site', name, '--ae-title', 'X', '--host', 'bad host!', '--port', '104'], /host must be a host name or an IP address/, 1],
    [['dicom-destination', 'create', '--site', name, '--ae-title', 'X', '--host', 'h', '--port', '70000'], /port must be an integer from 1 to 65535/, 1],
    [['dicom-destination', 'create', '--site', name, '--ae-title', 'X', '--host', 'h'], /--port is required/, 2],
    [['dicom-destination', 'delete', '--site', name], /needs the destination/, 2],
  ];
  for (const [args, message, status] of cases) {
    const result = await runCli(args);
    assert.equal(result.status, status, `${args.join(' ')}: ${result.stderr}`);
    assert.match(result.stderr, message, args.join(' '));
  }
});
